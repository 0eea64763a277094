// Unit tests: UTF-8 hygiene (common/utf8).
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

#include "common/utf8.h"

using namespace conclave;

namespace {
// The reference: clean the whole text, then cut back to a character boundary.
std::string PrefixOfWhole(const std::string& text, size_t max) {
  std::string clean = ValidUtf8(text);
  if (clean.size() <= max) return clean;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(clean[cut]) & 0xC0) == 0x80) --cut;
  return clean.substr(0, cut);
}
}  // namespace

TEST_CASE("Utf8Prefix of a long text is what cutting the whole cleaned text gives", "[utf8]") {
  // Multi-byte characters, stray continuation bytes, truncated sequences and overlongs, so a
  // character or a replacement straddles every limit tried.
  const std::string pieces[] = {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\x80",
                                "\xE2\x82", "\xC0\xAF", "\xFF", "\xF0\x9F"};
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    while (text.size() < 2000) text += pieces[rng() % std::size(pieces)];
    for (size_t max : {0, 1, 2, 3, 4, 5, 7, 100, 499, 500, 501, 1999}) {
      INFO("round " << round << " max " << max);
      CHECK(Utf8Prefix(text, max) == PrefixOfWhole(text, max));
    }
  }
  CHECK(Utf8Prefix("short", 500) == "short");
  CHECK(Utf8Prefix("no \xFF limit", SIZE_MAX) == ValidUtf8("no \xFF limit"));  // no overflow
  CHECK(Utf8Prefix(std::string(8 << 20, 'x'), 500) == std::string(500, 'x'));
}
