// FormIndex: the secret forms a redactor searches for, longest first, indexed by their first
// byte. The match is the naive scan's: at each position the first form in longest-first order
// that the text holds there (the naive scan compared every form at every byte: with a few
// secrets × 8 forms, 4 workers printing 8 MiB each held the loop for seconds).
// The scan skips (Wu–Manber): with m the shortest form's length (at most 255), it reads the
// last two bytes of the m-byte window at a position, and a table built from the forms' first m
// bytes says how far the window may move before any form could start inside it. Text that
// holds no form is passed over several bytes at a step; only where a form's byte pair ends the
// window are the forms starting with that byte compared. With a form shorter than 2 bytes the
// scan looks at every position.
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
  static size_t PairSlot(unsigned char a, unsigned char b) {
    return ((size_t{a} << 4) ^ b) & 0xfff;
  }

  std::vector<std::string> forms_;
  std::array<std::vector<uint32_t>, 256> by_first_{};  // indices into forms_, longest first
  size_t window_ = 0;           // m; 0 when some form is shorter than 2 bytes (no skipping)
  std::vector<uint8_t> shift_;  // by PairSlot of a window's last two bytes: a safe move
};

}  // namespace conclave::exec
