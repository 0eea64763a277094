// Unit tests: streaming redaction (exec/redactor).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "exec/form_index.h"
#include "exec/redactor.h"
#include "naive_redact.h"

using namespace conclave;

namespace {

TEST_CASE("streaming redaction catches secrets split across chunks", "[exec]") {
  std::string secret = "sk-SECRET-value";
  std::string text = "a" + secret + "b" + secret + secret + "c";
  for (size_t chunk = 1; chunk <= text.size(); ++chunk) {
    exec::StreamRedactor r({secret, "other-token"});
    std::string out;
    for (size_t i = 0; i < text.size(); i += chunk) out += r.Feed(text.substr(i, chunk));
    out += r.Finish();
    INFO(chunk);
    CHECK(out == "a[REDACTED]b[REDACTED][REDACTED]c");
  }
  CHECK(exec::RedactAll("no secrets here", {}) == "no secrets here");
}

TEST_CASE("streaming redaction holds back only what could start a secret", "[exec]") {
  exec::StreamRedactor r({"sk-SECRET-value"});
  CHECK(r.Feed("tick-1\n") == "tick-1\n");  // a live line goes out at once
  CHECK(r.Feed("key=sk-SE") == "key=");     // "sk-SE" may be a secret's start: held
  CHECK(r.Feed("CRET-value!") == "[REDACTED]!");
  CHECK(r.Feed("s") == "");      // "s" could start one too
  CHECK(r.Feed("o ") == "so ");  // "so " cannot
  CHECK(r.Finish().empty());
}

// Decodes every run of base64 characters in text at each of the 4 character offsets.
std::vector<std::string> DecodeRuns(const std::string& text) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && val(text[j]) >= 0) ++j;
    for (size_t off = 0; off < 4 && i + off < j; ++off) {
      std::string bytes;
      uint32_t acc = 0;
      int bits = 0;
      for (size_t k = i + off; k < j; ++k) {
        acc = (acc << 6) | static_cast<uint32_t>(val(text[k]));
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          bytes += static_cast<char>((acc >> bits) & 0xff);
        }
      }
      out.push_back(bytes);
    }
    i = j + 1;
  }
  return out;
}

std::string B64(const std::string& s) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t v = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += a[(v >> k) & 63];
  }
  if (i < s.size()) {
    uint32_t v = uint8_t(s[i]) << 16;
    if (i + 1 < s.size()) v |= uint8_t(s[i + 1]) << 8;
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    if (i + 1 < s.size()) out += a[(v >> 6) & 63];
  }
  return out;
}

TEST_CASE("a secret base64-encoded at any offset, or URL-encoded, never survives — whatever the "
          "chunking",
          "[exec]") {
  const std::string secret = "sk-live/0123+abcdef~XYZ";
  for (size_t pre = 0; pre < 6; ++pre) {
    std::string text = "key=" + B64(std::string(pre, 'x') + secret + "tail") + " url=" +
                       "sk-live%2F0123%2Babcdef~XYZ" + " end";
    for (size_t chunk : {size_t{1}, size_t{3}, size_t{7}, text.size()}) {
      exec::StreamRedactor r({secret});
      std::string out;
      for (size_t i = 0; i < text.size(); i += chunk) out += r.Feed(text.substr(i, chunk));
      out += r.Finish();
      INFO("prefix " << pre << " chunk " << chunk << ": " << out);
      CHECK(out.find("sk-live%2F") == std::string::npos);
      for (const auto& decoded : DecodeRuns(out)) CHECK(decoded.find(secret) == std::string::npos);
    }
  }
  // A short value is caught raw only (its encodings would match ordinary text).
  CHECK(exec::SecretForms("short").size() == 1);
  CHECK(exec::SecretForms(secret).size() > 4);
}

TEST_CASE("a secret in URL-safe base64 (-_ for +/) at any offset never survives", "[exec]") {
  // Bytes whose base64 holds + and / at every alignment, so the two alphabets differ.
  const std::string secret = "sk-\xfb\xff\xbf\xfb\xef\xbe-key";
  for (size_t pre = 0; pre < 6; ++pre) {
    std::string url = B64(std::string(pre, 'x') + secret + "tail");
    for (char& c : url) c = c == '+' ? '-' : c == '/' ? '_' : c;
    REQUIRE(url.find_first_of("-_") != std::string::npos);
    std::string text = "token=" + url + " end";
    for (size_t chunk : {size_t{1}, size_t{5}, text.size()}) {
      exec::StreamRedactor r({secret});
      std::string out;
      for (size_t i = 0; i < text.size(); i += chunk) out += r.Feed(text.substr(i, chunk));
      out += r.Finish();
      INFO("prefix " << pre << " chunk " << chunk << ": " << out);
      for (const auto& decoded : DecodeRuns(out)) CHECK(decoded.find(secret) == std::string::npos);
    }
  }
}

}  // namespace

using testing::NaiveRedact;

TEST_CASE("the indexed scan redacts exactly what the naive scan does, in any chunking", "[exec]") {
  // Secrets that nest and overlap, in a text full of their prefixes, near misses and encoded
  // forms at every alignment.
  const std::vector<std::string> secrets = {"sk-live-0123456789abcdef", "0123456789", "abcdef01",
                                            "tok", "sk-live-01"};
  std::mt19937 rng(7);
  std::vector<std::string> pieces = {"sk-", "sk-live-", "0123", "abcdef0", "to", "x", "\n", " "};
  for (const auto& s : secrets) {
    for (const auto& f : exec::SecretForms(s)) {
      pieces.push_back(f);
      pieces.push_back(f.substr(0, f.size() - 1));
    }
  }
  std::string text;
  while (text.size() < (1u << 18)) text += pieces[rng() % pieces.size()];
  const std::string want = NaiveRedact(text, secrets);
  REQUIRE(want != text);
  CHECK(exec::RedactAll(text, secrets) == want);
  CHECK(exec::Redactor(secrets).Apply(text) == want);
  for (size_t chunk : {1u, 7u, 4096u, 65536u}) {
    exec::StreamRedactor r(secrets);
    std::string got;
    for (size_t pos = 0; pos < text.size(); pos += chunk) {
      got += r.Feed(std::string_view(text).substr(pos, chunk));
    }
    got += r.Finish();
    CHECK(got == want);
  }
}

TEST_CASE("the skipping scan finds every form of long secrets at every offset, in any chunking",
          "[exec]") {
  // Only long secrets, so the scan moves several bytes at a step (the shortest form is 8+
  // bytes): every form, with a byte missing at either end, shifted by every offset inside
  // filler that shares the forms' alphabet.
  std::mt19937 rng(11);
  const std::string alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_";
  auto random_text = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += alnum[rng() % alnum.size()];
    return s;
  };
  const std::vector<std::string> secrets = {"ghp_" + random_text(36), "sk-ant-" + random_text(20),
                                            random_text(12)};
  std::vector<std::string> pieces;
  for (const auto& s : secrets) {
    for (const auto& f : exec::SecretForms(s)) {
      pieces.push_back(f);
      pieces.push_back(f.substr(1));
      pieces.push_back(f.substr(0, f.size() - 1));
      pieces.push_back(f.substr(0, f.size() / 2) + "x" + f.substr(f.size() / 2 + 1));
    }
  }
  std::string text;
  while (text.size() < (1u << 18)) {
    text += random_text(rng() % 40);
    text += pieces[rng() % pieces.size()];
  }
  const std::string want = NaiveRedact(text, secrets);
  REQUIRE(std::count(want.begin(), want.end(), '[') > 1000);
  CHECK(exec::Redactor(secrets).Apply(text) == want);
  for (size_t chunk : {1u, 5u, 13u, 4096u, 16384u}) {
    exec::StreamRedactor r(secrets);
    std::string got;
    for (size_t pos = 0; pos < text.size(); pos += chunk) {
      got += r.Feed(std::string_view(text).substr(pos, chunk));
    }
    got += r.Finish();
    INFO(chunk);
    CHECK(got == want);
  }
}

TEST_CASE("a skipping scan stops at the end it is given, never past it", "[exec]") {
  // What lies past end is not the scan's to emit (a stream holds it back): a step of the
  // window must not carry the scan beyond end, whatever bytes follow.
  exec::FormIndex index({"abcdefgh", "ghijklmnop"});
  const std::string text = "zzzzzzzzzzzzzzzzzzzzzzzz";
  for (size_t end = 0; end <= text.size(); ++end) {
    std::string out;
    INFO(end);
    CHECK(index.Replace(text, end, "[R]", &out) == end);
    CHECK(out == text.substr(0, end));
  }
  std::string out;
  CHECK(index.Replace("zzabcdefghzz", 3, "[R]", &out) == 10);  // a form started before end
  CHECK(out == "zz[R]");
}
