#include "exec/redactor.h"

#include <algorithm>

namespace conclave::exec {

StreamRedactor::StreamRedactor(std::vector<std::string> secrets) {
  for (auto& s : secrets) {
    if (!s.empty()) secrets_.push_back(std::move(s));
  }
  // Longest first, so a secret that contains another is replaced whole.
  std::sort(secrets_.begin(), secrets_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string RedactAll(std::string_view text, const std::vector<std::string>& secrets) {
  StreamRedactor r(secrets);
  std::string out = r.Feed(text);
  out += r.Finish();
  return out;
}

namespace {
// Replaces secrets in buf; returns the position up to which buf is final (no secret can
// start before it and end beyond the buffer).
std::string ReplaceAll(const std::string& buf, const std::vector<std::string>& secrets) {
  std::string out;
  out.reserve(buf.size());
  size_t i = 0;
  while (i < buf.size()) {
    bool hit = false;
    for (const auto& s : secrets) {
      if (buf.compare(i, s.size(), s) == 0) {
        out += kRedacted;
        i += s.size();
        hit = true;
        break;
      }
    }
    if (!hit) out += buf[i++];
  }
  return out;
}
}  // namespace

std::string StreamRedactor::Feed(std::string_view chunk) {
  if (secrets_.empty()) return std::string(chunk);
  pending_.append(chunk);
  // Hold back only what may still become a secret: the longest tail of pending_ that is a
  // proper prefix of one (a secret split across chunks starts there). Everything else goes
  // out now, so a live transcript is not held up by ordinary output.
  size_t hold = 0;
  for (const auto& s : secrets_) {
    for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n) {
      if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  // Everything before `cut` is emitted; a secret that starts before it is whole in pending_.
  size_t cut = pending_.size() - hold;
  std::string out;
  size_t i = 0;
  while (i < cut) {
    bool hit = false;
    for (const auto& s : secrets_) {
      if (pending_.compare(i, s.size(), s) == 0) {
        out += kRedacted;
        i += s.size();
        hit = true;
        break;
      }
    }
    if (!hit) out += pending_[i++];
  }
  pending_.erase(0, i);
  return out;
}

std::string StreamRedactor::Finish() {
  std::string out = ReplaceAll(pending_, secrets_);
  pending_.clear();
  return out;
}

}  // namespace conclave::exec
