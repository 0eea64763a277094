// Unit tests: the failure fingerprint normaliser (domain/fingerprint).
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "domain/fingerprint.h"

namespace conclave::domain {
namespace {


TEST_CASE("NormalizeFailureText replaces volatile parts with placeholders", "[failure]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"   \t\n ", ""},
      {"  Assertion   FAILED:\tx == y\r\n", "assertion failed: x == y"},
      {"2026-11-29T16:09:11Z boom", "<ts> boom"},
      {"2026-11-29 16:09:11.123 boom", "<ts> boom"},
      {"2026-11-29T16:09:11.123456+01:00 boom", "<ts> boom"},
      {"2026/11/29 boom", "<ts> boom"},
      {"[16:09:11] boom", "[<ts>] boom"},
      {"16:09:11,250 boom", "<ts> boom"},
      {"Nov 29 16:09:11 host boom", "<ts> host boom"},
      {"took 12ms", "took <dur>"},
      {"took 3.5s", "took <dur>"},
      {"took 2m10s", "took <dur>"},
      {"took 1h2m3.5s", "took <dur>"},
      {"took 300 ms", "took <dur>"},
      {"took 1.5 seconds", "took <dur>"},
      {"took 40\xc2\xb5s", "took <dur>"},
      {"id 550e8400-e29b-41d4-a716-446655440000 x", "id <uuid> x"},
      {"id 123E4567-E89B-12D3-A456-426614174000 x", "id <uuid> x"},
      {"at 0x7ffe5a3c2d10", "at <hex>"},
      {"at 0X1F", "at <hex>"},
      {"tree 3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b", "tree <hex>"},
      {"tree a1b2c3d", "tree <hex>"},
      {"open /tmp/x/y.cpp", "open <path>/y.cpp"},
      {"open '/var/run/app-12/config.json'", "open '<path>/config.json'"},
      {"open ~/work/notes.md", "open <path>/notes.md"},
      {"open C:\\Users\\bob\\main.cpp", "open <path>/main.cpp"},
      {"--prefix=/usr/local", "--prefix=<path>/local"},
      {"/tmp/build-7/test_42.log", "<path>/test_#.log"},
      {"/tmp/x/2026-11-29.log", "<path>/<ts>.log"},
      {"\x1b[31;1mFAILED\x1b[0m ok", "failed ok"},
      {"\x1b]0;title\x07text", "text"},
      {"pid 4242 exited with code 137", "pid # exited with code #"},
      {"==12345==ERROR: AddressSanitizer", "==#==error: addresssanitizer"},
  };
  for (const auto& [input, expected] : cases) {
    INFO("input: " << input);
    CHECK(NormalizeFailureText(input) == expected);
  }
}

TEST_CASE("NormalizeFailureText leaves look-alikes alone", "[failure]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      // Line:col is not a clock time; hh:mm alone is not one either.
      {"src/parser.cpp:12:34: error", "src/parser.cpp:#:#: error"},
      {"foo.cpp:12:34:56: note", "foo.cpp:#:#:#: note"},
      {"at 12:34 today", "at #:# today"},
      // Pure-letter words and short hex-looking words are words, pure digits are numbers.
      {"deadbeef cafe abc123", "deadbeef cafe abc#"},
      {"pid 12345678", "pid #"},
      {"x86_64 utf8 sha256 v1.2.3", "x#_# utf# sha# v#.#.#"},
      // Identifier parts joined by '_' are not hex ids.
      {"test_abc1234", "test_abc#"},
      // A unit must end the token; a single-letter unit needs no space.
      {"took 12 s", "took # s"},
      {"3sx", "#sx"},
      // Relative paths and division are not absolute paths; "//" comments neither.
      {"a / b", "a / b"},
      {"src/a/b.cpp", "src/a/b.cpp"},
      {"x // comment", "x // comment"},
  };
  for (const auto& [input, expected] : cases) {
    INFO("input: " << input);
    CHECK(NormalizeFailureText(input) == expected);
  }
}

TEST_CASE("Fingerprints of the same cause collide", "[failure]") {
  const std::vector<std::pair<std::string, std::string>> same = {
      {"/tmp/conclave-12345/work/src/parser.cpp:42:7: error: expected ';' before '}' token",
       "/home/ci/build-9/src/parser.cpp:57:3: error: expected ';' before '}' token"},
      {"Segmentation fault (core dumped) at 0x7ffe5a3c2d10 in pid 4242",
       "Segmentation fault (core dumped) at 0x55d0c0ffee00 in pid 31337"},
      {"2026-11-29T16:09:11Z ERROR test_store failed after 12ms",
       "2026-11-30 08:01:02.123 ERROR test_store failed after 3.5s"},
      {"fatal: reference is not a tree: 3f2a9c1d8e7b6a5f4c3d2e1f0a9b8c7d6e5f4a3b",
       "fatal: reference is not a tree: a1b2c3d"},
      {"dispatch 550e8400-e29b-41d4-a716-446655440000 failed: worker exited with code 1",
       "dispatch 123E4567-E89B-12D3-A456-426614174000 failed: worker exited with code 1"},
      {"\x1b[31mFAILED\x1b[0m tests/unit/store_test.cpp:88: REQUIRE( rows == 3 )",
       "FAILED tests/unit/store_test.cpp:91: REQUIRE( rows == 4 )"},
      {"  Assertion   failed:\tx == y\n", "assertion failed: x == y"},
      {"File \"/usr/lib/python3.11/json/decoder.py\", line 355, in raw_decode",
       "File \"/opt/venv/lib/python3.12/json/decoder.py\", line 340, in raw_decode"},
      {"timeout waiting for lock after 2m10s (held by pid 812)",
       "timeout waiting for lock after 45s (held by pid 90210)"},
      {"panic: runtime error: index out of range [5] with length 3 goroutine 1 [running]:",
       "panic: runtime error: index out of range [7] with length 2 goroutine 18 [running]:"},
      {"thread 'main' panicked at src/main.rs:10:5: called `Option::unwrap()` on a `None` value",
       "thread 'main' panicked at src/main.rs:12:9: called `Option::unwrap()` on a `None` value"},
      {"[16:09:11] build failed: linker exited with status 1",
       "[03:00:59.999] build failed: linker exited with status 1"},
      {"2026-11-29T16:09:11.123456+01:00 worker: contract violation: missing STATUS line",
       "2026-01-02T00:00:00-0800 worker: contract violation: missing STATUS line"},
      {"Error: ENOENT: no such file or directory, open '/var/folders/xy/ab12/T/tmp-4321/"
       "config.json'",
       "Error: ENOENT: no such file or directory, open '/tmp/tmp-99/config.json'"},
      {"The following tests FAILED:\n\t  3 - store_test (Failed)",
       "The following tests FAILED:\n\t 17 - store_test (Failed)"},
      {"request took 1.5 seconds and failed", "request took 300 ms and failed"},
      {"==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc "
       "0x55d3b1c2e3f4 bp 0x7ffd1a2b3c4d sp 0x7ffd1a2b3c40",
       "==99==ERROR: AddressSanitizer: heap-use-after-free on address 0x603000000aa0 at pc "
       "0x5612aa00b0c1 bp 0x7ffc00112233 sp 0x7ffc00112220"},
      {"Nov 29 16:09:11 host conclaved[812]: store: database is locked",
       "Dec  1 03:00:00 host conclaved[9]: store: database is locked"},
  };
  for (const auto& [a, b] : same) {
    INFO("a: " << a << "\nb: " << b);
    CHECK(NormalizeFailureText(a) == NormalizeFailureText(b));
    CHECK(FailureFingerprint(a, "parser handles trailing commas") ==
          FailureFingerprint(b, "parser handles trailing commas"));
  }
}

TEST_CASE("Fingerprints of different causes do not collide", "[failure]") {
  const std::vector<std::pair<std::string, std::string>> different = {
      {"/src/foo.cpp not found", "/src/bar.cpp not found"},
      {"parser.cpp:42: error: expected ';'", "lexer.cpp:42: error: expected ';'"},
      {"undefined reference to `Foo::Bar()'", "undefined reference to `Foo::Baz()'"},
      {"assertion failed: x == y", "assertion failed: x != y"},
      {"connect: connection refused", "connect: connection reset by peer"},
      {"open /etc/app.conf: permission denied", "open /etc/app.conf: no such file or directory"},
      {"FAILED tests/unit/store_test.cpp:88", "FAILED tests/unit/queue_test.cpp:88"},
      {"contract violation: missing STATUS line", "contract violation: missing SUMMARY line"},
      {"error: expected ';'", "warning: expected ';'"},
      {"took 3.5s", "took 3.5 items"},
  };
  for (const auto& [a, b] : different) {
    INFO("a: " << a << "\nb: " << b);
    CHECK(NormalizeFailureText(a) != NormalizeFailureText(b));
    CHECK(FailureFingerprint(a, "h") != FailureFingerprint(b, "h"));
  }
}

TEST_CASE("The hypothesis is part of the fingerprint", "[failure]") {
  const std::string text = "assertion failed: rows == 3";
  CHECK(FailureFingerprint(text, "cache is stale") != FailureFingerprint(text, "index is stale"));
  CHECK(FailureFingerprint(text, "") != FailureFingerprint(text, "cache is stale"));
  // Only surrounding whitespace of the hypothesis is ignored.
  CHECK(FailureFingerprint(text, "  cache is stale \n") ==
        FailureFingerprint(text, "cache is stale"));
  CHECK(FailureFingerprint(text, "Cache is stale") != FailureFingerprint(text, "cache is stale"));
  // The separator keeps text and hypothesis apart.
  CHECK(FailureFingerprint("ab", "c") != FailureFingerprint("a", "bc"));
}

TEST_CASE("FailureFingerprint is FNV-1a 64 over normalised text, 0x1f, hypothesis", "[failure]") {
  // Golden values computed independently (FNV-1a 64, offset cbf29ce484222325, prime
  // 100000001b3); they pin the format across compilers and platforms.
  CHECK(FailureFingerprint("", "") == "af63d24c8601db8e");
  CHECK(FailureFingerprint("Error at 0x7FFE12345678 in /tmp/a/b.cpp:12", "  fix the parser  ") ==
        "91ef89d68c0b0a4a");
  const std::string fp = FailureFingerprint("anything 123", "h");
  CHECK(fp.size() == 16);
  CHECK(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(FailureFingerprint("anything 123", "h") == fp);
}

}  // namespace
}  // namespace conclave::domain
