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

namespace {
// The reference for ValidUtf8, one code point at a time from the Unicode definition: each
// maximal valid sequence is kept, every other byte becomes U+FFFD.
std::string CleanByCodePoint(const std::string& s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    ok = ok && !(n == 2 && cp < 0x80) && !(n == 3 && cp < 0x800) && !(n == 4 && cp < 0x10000) &&
         cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out += s.substr(i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}
}  // namespace

TEST_CASE("ValidUtf8 keeps valid text as it is and replaces each bad byte", "[utf8]") {
  CHECK(ValidUtf8("") == "");
  CHECK(ValidUtf8("plain ascii") == "plain ascii");
  CHECK(ValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(ValidUtf8("\xFF" "a") == "\xEF\xBF\xBD" "a");
  CHECK(ValidUtf8("a\xC3") == "a\xEF\xBF\xBD");                      // cut at the end
  CHECK(ValidUtf8("a\xC0\xAF" "b") == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");  // overlong
  CHECK(ValidUtf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  // Random texts mixing ASCII, valid sequences and stray bytes, against the reference.
  std::mt19937 rng(7);
  const char* pieces[] = {"ab", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\x80", "\xFF",
                          "\xC3", "\xE2\x82", "\xF4\x90\x80\x80", "\xED\xBF\xBF", "\n"};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    const int parts = static_cast<int>(rng() % 12);
    for (int k = 0; k < parts; ++k) s += pieces[rng() % (sizeof pieces / sizeof *pieces)];
    INFO("round " << round);
    CHECK(ValidUtf8(s) == CleanByCodePoint(s));
  }
}
