// Fuzz target: UTF-8 hygiene (common/utf8). Input: byte 0 picks a prefix length, the rest is
// worker text. Properties: ValidUtf8's output is valid (a fixed point) and no shorter than the
// input; valid input comes back unchanged; Utf8Prefix stays within its limit, is valid and is
// a prefix of the cleaned text: the longest that ends on a character boundary (it reads only
// the head of the text, and must give what cutting the whole cleaned text gives).
#include <algorithm>

#include "common/utf8.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace conclave;
  if (size == 0) return 0;
  const size_t max = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string clean = ValidUtf8(text);
  if (ValidUtf8(clean) != clean) fuzz::PropertyFailed("ValidUtf8 output is not valid");
  if (clean.size() < text.size()) fuzz::PropertyFailed("ValidUtf8 dropped bytes");
  if (clean.size() == text.size() && clean != text) fuzz::PropertyFailed("valid text changed");
  std::string prefix = Utf8Prefix(text, max);
  if (prefix.size() > max) fuzz::PropertyFailed("Utf8Prefix over its limit");
  if (ValidUtf8(prefix) != prefix) fuzz::PropertyFailed("Utf8Prefix output is not valid");
  if (clean.compare(0, prefix.size(), prefix) != 0) fuzz::PropertyFailed("not a prefix");
  size_t cut = std::min(max, clean.size());
  while (cut < clean.size() && cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  if (prefix.size() != cut) fuzz::PropertyFailed("Utf8Prefix is not the longest whole prefix");
  return 0;
}
