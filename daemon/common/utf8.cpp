#include "common/utf8.h"

namespace conclave {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid.
size_t SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and out-of-range code points are invalid.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  // Most text is valid (and mostly ASCII): find the first bad byte, copy at once if none.
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = SequenceLength(text, i);
    if (n == 0) break;
    i += n;
  }
  if (i == text.size()) return std::string(text);
  std::string out;
  out.reserve(text.size() + 2);
  size_t run = 0;  // start of the valid bytes not yet copied
  while (i < text.size()) {
    size_t n = SequenceLength(text, i);
    if (n == 0) {
      out.append(text.substr(run, i - run));
      out += "\xEF\xBF\xBD";
      run = ++i;
    } else {
      i += n;
    }
  }
  out.append(text.substr(run));
  return out;
}

std::string Utf8Prefix(std::string_view text, size_t max_bytes) {
  // Cleaning never shortens (a bad byte becomes three), so the first max_bytes of the result
  // come from at most the first max_bytes of the text, plus the rest of a sequence starting
  // there: the tail of an 8 MiB text is never looked at.
  std::string clean = ValidUtf8(max_bytes >= text.size() ? text : text.substr(0, max_bytes + 4));
  if (clean.size() <= max_bytes) return clean;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80) --cut;
  return clean.substr(0, cut);
}

}  // namespace conclave
