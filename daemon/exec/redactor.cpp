#include "exec/redactor.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace conclave::exec {

namespace {
constexpr size_t kMinFormBytes = 8;

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Base64(std::string_view s, bool url) {
  const char* a = url ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                      : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  // Unpadded: 4 characters per whole group of 3 bytes, then 2 or 3 for the rest.
  std::string out(s.size() / 3 * 4 + (s.size() % 3 ? s.size() % 3 + 1 : 0), '\0');
  char* o = out.data();
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) *o++ = a[(v >> k) & 63];
  }
  if (i < s.size()) {
    uint32_t v = uint8_t(s[i]) << 16;
    if (i + 1 < s.size()) v |= uint8_t(s[i + 1]) << 8;
    int chars = i + 1 < s.size() ? 3 : 2;
    for (int k = 0; k < chars; ++k) *o++ = a[(v >> (18 - 6 * k)) & 63];
  }
  return out;
}

// The base64 characters that depend only on the secret's bytes when it starts `pad` bytes
// into a 3-byte group of a longer text.
std::string Base64Core(std::string_view secret, size_t pad, bool url) {
  std::string padded;
  padded.reserve(pad + secret.size());
  padded.append(pad, '\0');
  padded.append(secret);
  std::string enc = Base64(padded, url);
  size_t first = (8 * pad + 5) / 6;                  // ceil(8·pad / 6)
  size_t last = (8 * (pad + secret.size())) / 6;     // chars fully inside the secret end here
  if (last > enc.size()) last = enc.size();
  if (first >= last) return std::string();
  enc.resize(last);
  enc.erase(0, first);
  return enc;
}
}  // namespace

std::vector<std::string> SecretForms(std::string_view secret) {
  std::vector<std::string> forms;
  if (secret.empty()) return forms;
  forms.emplace_back(secret);
  if (secret.size() < kMinFormBytes) return forms;
  auto add = [&](std::string f) {
    if (f.size() >= kMinFormBytes && std::find(forms.begin(), forms.end(), f) == forms.end()) {
      forms.push_back(std::move(f));
    }
  };
  add(UrlEncode(secret));
  for (size_t pad = 0; pad < 3; ++pad) {
    add(Base64Core(secret, pad, false));
    add(Base64Core(secret, pad, true));
  }
  return forms;
}

namespace {
std::vector<std::string> AllForms(const std::vector<std::string>& secrets) {
  std::vector<std::string> all;
  for (const auto& s : secrets) {
    for (auto& f : SecretForms(s)) {
      if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(std::move(f));
    }
  }
  return all;
}
}  // namespace

StreamRedactor::StreamRedactor(std::vector<std::string> secrets)
    : index_(std::make_shared<const FormIndex>(AllForms(secrets))) {}

Redactor::Redactor(const std::vector<std::string>& secrets)
    : secrets_(secrets), index_(AllForms(secrets)) {}

std::string Redactor::Apply(std::string_view text) const {
  if (index_.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  index_.Replace(text, text.size(), kRedacted, &out);
  return out;
}

std::string RedactAll(std::string_view text, const std::vector<std::string>& secrets) {
  StreamRedactor r(secrets);
  std::string out = r.Feed(text);
  out += r.Finish();
  return out;
}

std::string StreamRedactor::Feed(std::string_view chunk) {
  if (!index_ || index_->empty()) return std::string(chunk);  // (a moved-from redactor: none)
  const FormIndex& index = *index_;
  // With nothing held back the chunk is scanned where it is; only its tail is kept.
  const bool held = !pending_.empty();
  if (held) pending_.append(chunk);
  std::string_view text = held ? std::string_view(pending_) : chunk;
  // Hold back only what may still become a secret: the longest tail of the text that is a
  // proper prefix of one (a secret split across chunks starts there). Everything else goes
  // out now, so a live transcript is not held up by ordinary output. A secret that starts
  // before the cut is whole in the text.
  size_t cut = text.size() - index.PrefixTail(text);
  std::string out;
  out.reserve(cut);
  size_t done = index.Replace(text, cut, kRedacted, &out);
  if (held) {
    pending_.erase(0, done);
  } else {
    pending_.assign(chunk.substr(done));
  }
  return out;
}

std::string StreamRedactor::Finish() {
  std::string out;
  if (!index_) return out;
  index_->Replace(pending_, pending_.size(), kRedacted, &out);
  pending_.clear();
  return out;
}

}  // namespace conclave::exec
