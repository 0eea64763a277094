#include "exec/form_index.h"

#include <algorithm>
#include <cstring>

namespace conclave::exec {

FormIndex::FormIndex(std::vector<std::string> forms) : forms_(std::move(forms)) {
  // Longest first (stable: equal lengths keep their order), so a form containing another is
  // replaced whole.
  std::stable_sort(forms_.begin(), forms_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (uint32_t k = 0; k < forms_.size(); ++k) {
    if (!forms_[k].empty()) by_first_[static_cast<uint8_t>(forms_[k][0])].push_back(k);
  }
  if (forms_.empty() || forms_.back().size() < 2) return;  // the last is the shortest
  window_ = std::min<size_t>(forms_.back().size(), 255);
  // A pair ending at q (1-based, 2 ≤ q ≤ m) of a form's first m bytes allows a move of m − q;
  // a pair no form holds there allows m − 1 (the window's last byte may still start one).
  shift_.assign(4096, static_cast<uint8_t>(window_ - 1));
  for (const auto& f : forms_) {
    for (size_t q = 2; q <= window_; ++q) {
      uint8_t& s = shift_[PairSlot(static_cast<uint8_t>(f[q - 2]), static_cast<uint8_t>(f[q - 1]))];
      s = std::min(s, static_cast<uint8_t>(window_ - q));
    }
  }
}

size_t FormIndex::MatchAt(std::string_view text, size_t i) const {
  const size_t left = text.size() - i;
  for (uint32_t k : by_first_[static_cast<uint8_t>(text[i])]) {
    const std::string& f = forms_[k];
    if (f.size() <= left && std::memcmp(text.data() + i, f.data(), f.size()) == 0) return f.size();
  }
  return 0;
}

size_t FormIndex::Replace(std::string_view text, size_t end, std::string_view with,
                          std::string* out) const {
  const char* p = text.data();
  size_t i = 0, plain = 0;  // text[plain, i) is copied out unchanged
  while (i < end) {
    if (window_ > 0) {
      if (i + window_ > text.size()) {  // no form fits from here on
        i = end;
        break;
      }
      uint8_t s = shift_[PairSlot(static_cast<uint8_t>(p[i + window_ - 2]),
                                  static_cast<uint8_t>(p[i + window_ - 1]))];
      if (s > 0) {  // no form starts in [i, i + s)
        i = std::min(i + s, end);
        continue;
      }
    } else if (by_first_[static_cast<uint8_t>(p[i])].empty()) {
      ++i;
      continue;
    }
    size_t n = MatchAt(text, i);
    if (n == 0) {
      ++i;
      continue;
    }
    out->append(p + plain, i - plain);
    out->append(with);
    i += n;
    plain = i;
  }
  out->append(p + plain, i - plain);
  return i;
}

size_t FormIndex::PrefixTail(std::string_view text) const {
  size_t hold = 0;
  for (const auto& f : forms_) {
    for (size_t n = std::min(f.size() - 1, text.size()); n > hold; --n) {
      const char* tail = text.data() + text.size() - n;
      if (*tail == f[0] && std::memcmp(tail, f.data(), n) == 0) {
        hold = n;
        break;
      }
    }
  }
  return hold;
}

}  // namespace conclave::exec
