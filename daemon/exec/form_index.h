// FormIndex: the secret forms a redactor searches for, longest first, indexed by their first
// byte. A scan looks at one byte per position and compares only the forms that start with it,
// so redacting costs about one table lookup per byte however many forms there are (the naive
// scan compared every form at every byte: with a few secrets × 8 forms, 4 workers printing
// 8 MiB each held the loop for seconds). The match is the same as the naive scan's: at each
// position the first form in longest-first order that the text holds there.
// Immutable after construction, so thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::exec {

class FormIndex {
 public:
  FormIndex() = default;
  // forms: non-empty, distinct; they are sorted longest first here.
  explicit FormIndex(std::vector<std::string> forms);

  const std::vector<std::string>& forms() const { return forms_; }
  bool empty() const { return forms_.empty(); }

  // The length of the form text holds at i (the first in longest-first order), or 0.
  size_t MatchAt(std::string_view text, size_t i) const;

  // Appends text[0, end) to out with every form replaced by `with`, scanning from the start;
  // a form that starts before end must lie whole inside text. Returns where the scan stopped:
  // end, or past it when a form starting before end reaches beyond.
  size_t Replace(std::string_view text, size_t end, std::string_view with, std::string* out) const;

  // The length of the longest tail of text that is a proper prefix of some form (what a
  // stream must hold back: a form split across two chunks starts there).
  size_t PrefixTail(std::string_view text) const;

 private:
  std::vector<std::string> forms_;
  std::array<std::vector<uint32_t>, 256> by_first_{};  // indices into forms_, longest first
};

}  // namespace conclave::exec
