// Contract: unit tests for the failure policy domain code (issue 4): failure kinds,
// fingerprint normaliser, circuit breaker transitions, backoff bounds, cost and caps.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "domain/backoff.h"
#include "domain/circuit_breaker.h"
#include "domain/cost.h"
#include "domain/failure_kind.h"
#include "domain/fingerprint.h"

namespace conclave::domain {
namespace {

constexpr FailureKind kAllKinds[] = {
    FailureKind::kNone,        FailureKind::kSpawnFailed,         FailureKind::kTransportError,
    FailureKind::kRateLimited, FailureKind::kProviderUnavailable, FailureKind::kAuthError,
    FailureKind::kTimeout,     FailureKind::kHeartbeatLost,       FailureKind::kInterrupted,
    FailureKind::kCancelled,   FailureKind::kWorkerFailed,        FailureKind::kContractViolation,
    FailureKind::kNonZeroExit, FailureKind::kClaimNotPersisted,   FailureKind::kBudgetExceeded,
};

constexpr FailureKind kOperationalKinds[] = {
    FailureKind::kSpawnFailed,         FailureKind::kTransportError, FailureKind::kRateLimited,
    FailureKind::kProviderUnavailable, FailureKind::kAuthError,      FailureKind::kTimeout,
    FailureKind::kHeartbeatLost,       FailureKind::kInterrupted,
};

constexpr FailureKind kCountedKinds[] = {
    FailureKind::kWorkerFailed,
    FailureKind::kContractViolation,
    FailureKind::kNonZeroExit,
    FailureKind::kClaimNotPersisted,
};

// Neither counted nor operational, and not a success.
constexpr FailureKind kNeutralKinds[] = {FailureKind::kCancelled, FailureKind::kBudgetExceeded};

// ---------------------------------------------------------------------------- failure kinds

TEST_CASE("FailureKindName gives the stored snake_case names", "[failure]") {
  const std::vector<std::pair<FailureKind, std::string>> expected = {
      {FailureKind::kNone, "none"},
      {FailureKind::kSpawnFailed, "spawn_failed"},
      {FailureKind::kTransportError, "transport_error"},
      {FailureKind::kRateLimited, "rate_limited"},
      {FailureKind::kProviderUnavailable, "provider_unavailable"},
      {FailureKind::kAuthError, "auth_error"},
      {FailureKind::kTimeout, "timeout"},
      {FailureKind::kHeartbeatLost, "heartbeat_lost"},
      {FailureKind::kInterrupted, "interrupted"},
      {FailureKind::kCancelled, "cancelled"},
      {FailureKind::kWorkerFailed, "worker_failed"},
      {FailureKind::kContractViolation, "contract_violation"},
      {FailureKind::kNonZeroExit, "nonzero_exit"},
      {FailureKind::kClaimNotPersisted, "claim_not_persisted"},
      {FailureKind::kBudgetExceeded, "budget_exceeded"},
  };
  for (const auto& [kind, name] : expected) {
    CHECK(FailureKindName(kind) == name);
    CHECK(ParseFailureKind(name) == kind);
  }
}

TEST_CASE("ParseFailureKind round-trips and rejects unknown names", "[failure]") {
  for (FailureKind kind : kAllKinds) CHECK(ParseFailureKind(FailureKindName(kind)) == kind);
  CHECK_FALSE(ParseFailureKind("").has_value());
  CHECK_FALSE(ParseFailureKind("RATE_LIMITED").has_value());
  CHECK_FALSE(ParseFailureKind("non_zero_exit").has_value());
  CHECK_FALSE(ParseFailureKind("rate_limited ").has_value());
}

TEST_CASE("Operational and counted kinds are closed, disjoint lists", "[failure]") {
  int operational = 0, counted = 0;
  for (FailureKind kind : kAllKinds) {
    INFO(FailureKindName(kind));
    CHECK_FALSE((IsOperational(kind) && IsCounted(kind)));
    operational += IsOperational(kind);
    counted += IsCounted(kind);
  }
  CHECK(operational == 8);
  CHECK(counted == 4);
  for (FailureKind kind : kOperationalKinds) CHECK(IsOperational(kind));
  for (FailureKind kind : kCountedKinds) CHECK(IsCounted(kind));
  for (FailureKind kind :
       {FailureKind::kNone, FailureKind::kCancelled, FailureKind::kBudgetExceeded}) {
    CHECK_FALSE(IsOperational(kind));
    CHECK_FALSE(IsCounted(kind));
  }
}

// ------------------------------------------------------------------------------ normaliser

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

// ------------------------------------------------------------------------- circuit breaker

AttemptOutcome Counted(std::string fingerprint, FailureKind kind = FailureKind::kWorkerFailed) {
  return AttemptOutcome{kind, std::move(fingerprint)};
}

TEST_CASE("Breaker: success resets to zero from any closed state", "[failure]") {
  const AttemptOutcome ok{FailureKind::kNone, ""};
  CHECK(FoldAttempt(BreakerState{}, ok) == BreakerState{});
  CHECK(FoldAttempt(BreakerState{3, "aaaa", false}, ok) == BreakerState{});
  CHECK(FoldAttempt(BreakerState{4, "aaaa", false}, ok) == BreakerState{});
}

TEST_CASE("Breaker: every counted kind counts and builds a series", "[failure]") {
  for (FailureKind kind : kCountedKinds) {
    INFO(FailureKindName(kind));
    BreakerState s = FoldAttempt(BreakerState{}, Counted("aaaa", kind));
    CHECK(s == BreakerState{1, "aaaa", false});
    s = FoldAttempt(s, Counted("aaaa", kind));
    CHECK(s == BreakerState{2, "aaaa", false});
  }
  // Different counted kinds with the same fingerprint continue one series.
  const BreakerState s = ReplayAttempts({Counted("f", FailureKind::kWorkerFailed),
                                         Counted("f", FailureKind::kNonZeroExit),
                                         Counted("f", FailureKind::kContractViolation)});
  CHECK(s == BreakerState{3, "f", false});
}

TEST_CASE("Breaker: a different fingerprint restarts the series at 1", "[failure]") {
  CHECK(FoldAttempt(BreakerState{4, "aaaa", false}, Counted("bbbb")) ==
        BreakerState{1, "bbbb", false});
  CHECK(FoldAttempt(BreakerState{1, "aaaa", false}, Counted("bbbb")) ==
        BreakerState{1, "bbbb", false});
}

TEST_CASE("Breaker: operational, cancelled and budget outcomes neither count nor reset",
          "[failure]") {
  const BreakerState states[] = {BreakerState{}, BreakerState{1, "aaaa", false},
                                 BreakerState{4, "aaaa", false}, BreakerState{5, "aaaa", true}};
  for (const BreakerState& s : states) {
    for (FailureKind kind : kOperationalKinds) {
      INFO(FailureKindName(kind));
      CHECK(FoldAttempt(s, AttemptOutcome{kind, ""}) == s);
      CHECK(FoldAttempt(s, AttemptOutcome{kind, "zzzz"}) == s);  // Stray fingerprint ignored.
    }
    for (FailureKind kind : kNeutralKinds) {
      INFO(FailureKindName(kind));
      CHECK(FoldAttempt(s, AttemptOutcome{kind, ""}) == s);
    }
  }
}

TEST_CASE("Breaker: five same-fingerprint counted failures open it", "[failure]") {
  BreakerState s;
  for (int n = 1; n <= 4; ++n) {
    s = FoldAttempt(s, Counted("aaaa"));
    CHECK(s == BreakerState{n, "aaaa", false});
  }
  s = FoldAttempt(s, Counted("aaaa"));
  CHECK(s == BreakerState{5, "aaaa", true});
  CHECK(kBreakerThreshold == 5);
}

TEST_CASE("Breaker: an open breaker is latched until a re-plan", "[failure]") {
  const BreakerState open{5, "aaaa", true};
  for (FailureKind kind : kAllKinds) {
    INFO(FailureKindName(kind));
    CHECK(FoldAttempt(open, AttemptOutcome{kind, "aaaa"}) == open);
    CHECK(FoldAttempt(open, AttemptOutcome{kind, "bbbb"}) == open);
  }
}

TEST_CASE("Breaker: replay covers the issue's scenarios", "[failure]") {
  const AttemptOutcome a = Counted("aaaa");
  const AttemptOutcome b = Counted("bbbb");
  const AttemptOutcome timeout{FailureKind::kTimeout, ""};
  const AttemptOutcome rate{FailureKind::kRateLimited, ""};
  const AttemptOutcome ok{FailureKind::kNone, ""};
  const AttemptOutcome cancelled{FailureKind::kCancelled, ""};

  CHECK(ReplayAttempts({}) == BreakerState{});
  CHECK(ReplayAttempts({a, a, a, a, a}) == BreakerState{5, "aaaa", true});
  CHECK(ReplayAttempts({a, a, a, a}) == BreakerState{4, "aaaa", false});
  // A different error in between resets the count.
  CHECK(ReplayAttempts({a, a, a, b, a, a}) == BreakerState{2, "aaaa", false});
  CHECK(ReplayAttempts({a, a, b, a, a, a, a, a}) == BreakerState{5, "aaaa", true});
  // Operational failures in between neither count nor reset.
  CHECK(ReplayAttempts({a, timeout, a, rate, a, cancelled, a, timeout, a}) ==
        BreakerState{5, "aaaa", true});
  CHECK(ReplayAttempts({timeout, timeout, timeout, timeout, timeout}) == BreakerState{});
  // A success in between resets the count.
  CHECK(ReplayAttempts({a, a, a, a, ok, a}) == BreakerState{1, "aaaa", false});
  // Once open, later outcomes do not change it.
  CHECK(ReplayAttempts({a, a, a, a, a, ok, b}) == BreakerState{5, "aaaa", true});
}

TEST_CASE("Breaker: custom thresholds", "[failure]") {
  const AttemptOutcome a = Counted("aaaa");
  CHECK(ReplayAttempts({a, a}, 2) == BreakerState{2, "aaaa", true});
  CHECK(ReplayAttempts({a}, 2) == BreakerState{1, "aaaa", false});
  CHECK(ReplayAttempts({a}, 1) == BreakerState{1, "aaaa", true});
  CHECK(ReplayAttempts({a}, 0) == BreakerState{1, "aaaa", true});   // Clamped to 1.
  CHECK(ReplayAttempts({a}, -3) == BreakerState{1, "aaaa", true});  // Clamped to 1.
  CHECK(ReplayAttempts({a, a, a, a, a}, 6) == BreakerState{5, "aaaa", false});
}

TEST_CASE("Re-plan: only hypothesis, scope or validation changes count", "[failure]") {
  // All 16 combinations of the four flags.
  for (int bits = 0; bits < 16; ++bits) {
    PlanChange change;
    change.hypothesis_changed = bits & 1;
    change.scope_changed = bits & 2;
    change.validation_changed = bits & 4;
    change.profile_changed = bits & 8;
    INFO("bits " << bits);
    const bool replan = (bits & 7) != 0;
    CHECK(IsReplan(change) == replan);

    const BreakerState open{5, "aaaa", true};
    const BreakerState counting{3, "aaaa", false};
    CHECK(ApplyPlanChange(open, change) == (replan ? BreakerState{} : open));
    CHECK(ApplyPlanChange(counting, change) == (replan ? BreakerState{} : counting));
    CHECK(ApplyPlanChange(BreakerState{}, change) == BreakerState{});
  }
}

TEST_CASE("Re-plan: switching the model alone leaves the breaker open", "[failure]") {
  PlanChange model_only;
  model_only.profile_changed = true;
  BreakerState s =
      ReplayAttempts({Counted("a"), Counted("a"), Counted("a"), Counted("a"), Counted("a")});
  REQUIRE(s.open);
  s = ApplyPlanChange(s, model_only);
  CHECK(s.open);
  PlanChange replan;
  replan.scope_changed = true;
  s = ApplyPlanChange(s, replan);
  CHECK(s == BreakerState{});
  // After the re-plan a fresh series starts from zero.
  s = FoldAttempt(s, Counted("a"));
  CHECK(s == BreakerState{1, "a", false});
}

// --------------------------------------------------------------------------------- backoff

TEST_CASE("Backoff: exponential growth capped at max, without jitter", "[failure]") {
  BackoffPolicy p;
  p.jitter = 0;
  const std::vector<std::pair<int, int64_t>> expected = {
      {1, 2000},  {2, 4000},   {3, 8000},   {4, 16000},   {5, 32000},
      {6, 64000}, {7, 120000}, {8, 120000}, {40, 120000}, {1000000, 120000},
  };
  for (const auto& [n, ms] : expected) {
    INFO("retry " << n);
    CHECK(BackoffDelay(p, n, 0).count() == ms);
    CHECK(BackoffDelay(p, n, ~uint64_t{0}).count() == ms);
  }
  CHECK(BackoffDelay(p, 0, 0).count() == 2000);   // Treated as retry 1.
  CHECK(BackoffDelay(p, -5, 0).count() == 2000);  // Treated as retry 1.
}

TEST_CASE("Backoff: jitter stays within its fraction and uses the random bits", "[failure]") {
  const BackoffPolicy p;                                         // 2000 ms base, 20% jitter.
  CHECK(BackoffDelay(p, 1, 0).count() == 1600);                  // f = -jitter.
  CHECK(BackoffDelay(p, 1, uint64_t{1} << 63).count() == 2000);  // f = 0.
  CHECK(BackoffDelay(p, 1, ~uint64_t{0}).count() == 2400);       // f just below +jitter.
  CHECK(BackoffDelay(p, 1, 0x0123456789abcdefULL) == BackoffDelay(p, 1, 0x0123456789abcdefULL));

  uint64_t x = 0x9e3779b97f4a7c15ULL;  // xorshift64 sweep.
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (int n = 1; n <= 10; ++n) {
      const int64_t nominal = std::min<int64_t>(int64_t{2000} << (n - 1), 120000);
      const int64_t d = BackoffDelay(p, n, x).count();
      CHECK(d >= static_cast<int64_t>(nominal * 0.8) - 1);
      CHECK(d <= static_cast<int64_t>(nominal * 1.2) + 1);
      CHECK(d <= 144000);
    }
  }
}

TEST_CASE("Backoff: never negative, never above max*(1+jitter), odd policies", "[failure]") {
  const std::vector<BackoffPolicy> policies = {
      {0, 0, 4, 0.2},
      {-100, 5000, 4, 0.5},
      {1000, -1, 4, 0.2},
      {7, 11, 4, 0.3},
      {3, 3, 4, 0.2},
      {5000, 1000, 4, 0.2},
      {2000, 120000, 4, 7},
      {2000, 120000, 4, -1},
      {std::numeric_limits<int>::max(), std::numeric_limits<int>::max(), 4, 1.0},
      {2000, 120000, 4, std::numeric_limits<double>::quiet_NaN()},
  };
  const uint64_t bits[] = {0, 1, uint64_t{1} << 63, ~uint64_t{0}, 0x5555555555555555ULL};
  for (const BackoffPolicy& p : policies) {
    const double j = p.jitter != p.jitter ? 0 : std::clamp(p.jitter, 0.0, 1.0);
    const double ceiling = std::max(p.max_ms, 0) * (1 + j);
    for (int n : {1, 2, 3, 31, 64, 1000}) {
      for (uint64_t b : bits) {
        INFO("base " << p.base_ms << " max " << p.max_ms << " jitter " << p.jitter << " n " << n);
        const int64_t d = BackoffDelay(p, n, b).count();
        CHECK(d >= 0);
        CHECK(static_cast<double>(d) <= ceiling);
      }
    }
  }
  // A zero base with a huge retry number returns at once.
  CHECK(
      BackoffDelay(BackoffPolicy{0, 120000, 4, 0.2}, std::numeric_limits<int>::max(), 0).count() ==
      0);
  BackoffPolicy small{5000, 1000, 4, 0};
  CHECK(BackoffDelay(small, 1, 0).count() == 1000);  // Base above max is capped.
}

TEST_CASE("ShouldRetry: operational kinds only, never auth_error, bounded", "[failure]") {
  const BackoffPolicy p;  // max_attempts = 4 -> at most 3 retries.
  for (FailureKind kind : kAllKinds) {
    INFO(FailureKindName(kind));
    const bool retryable = IsOperational(kind) && kind != FailureKind::kAuthError;
    CHECK(ShouldRetry(p, kind, 0) == retryable);
    CHECK(ShouldRetry(p, kind, 2) == retryable);
    CHECK_FALSE(ShouldRetry(p, kind, 3));
    CHECK_FALSE(ShouldRetry(p, kind, 100));
  }
  CHECK(ShouldRetry(p, FailureKind::kRateLimited, -1));  // Treated as 0.
  CHECK_FALSE(ShouldRetry(BackoffPolicy{2000, 120000, 1, 0.2}, FailureKind::kTimeout, 0));
  CHECK_FALSE(ShouldRetry(BackoffPolicy{2000, 120000, 0, 0.2}, FailureKind::kTimeout, 0));
  CHECK(ShouldRetry(BackoffPolicy{2000, 120000, 2, 0.2}, FailureKind::kTimeout, 0));
  CHECK_FALSE(ShouldRetry(BackoffPolicy{2000, 120000, 2, 0.2}, FailureKind::kTimeout, 1));
}

// ------------------------------------------------------------------------------------ cost

TEST_CASE("ComputeCost: a reported cost wins", "[failure]") {
  const PriceTable prices{3.0, 15.0, 0.3};
  const Usage usage{1000000, 1000000, 1000000};
  const Cost c = ComputeCost(0.42, usage, prices);
  CHECK(c.usd == Approx(0.42));
  CHECK_FALSE(c.estimated);
  CHECK(c.known);
  const Cost zero = ComputeCost(0.0, usage, PriceTable{});
  CHECK(zero.usd == 0);
  CHECK_FALSE(zero.estimated);
  CHECK(zero.known);
}

TEST_CASE("ComputeCost: estimated from usage and prices", "[failure]") {
  const PriceTable prices{3.0, 15.0, 0.3};
  const Cost c = ComputeCost(std::nullopt, Usage{200000, 10000, 1000000}, prices);
  CHECK(c.usd == Approx(0.6 + 0.15 + 0.3));
  CHECK(c.estimated);
  CHECK(c.known);
  // Invalid reported values fall back to the estimate.
  CHECK(ComputeCost(-1.0, Usage{1000000, 0, 0}, prices).usd == Approx(3.0));
  CHECK(ComputeCost(std::numeric_limits<double>::quiet_NaN(), Usage{1000000, 0, 0}, prices)
            .estimated);
  // Negative token counts count as zero.
  CHECK(ComputeCost(std::nullopt, Usage{-5, 1000000, 0}, prices).usd == Approx(15.0));
}

TEST_CASE("ComputeCost: unknown when there are no prices but there is usage", "[failure]") {
  const Cost unknown = ComputeCost(std::nullopt, Usage{100, 50, 0}, PriceTable{});
  CHECK(unknown.usd == 0);
  CHECK(unknown.estimated);
  CHECK_FALSE(unknown.known);
  const Cost nothing = ComputeCost(std::nullopt, Usage{}, PriceTable{});
  CHECK(nothing.usd == 0);
  CHECK(nothing.estimated);
  CHECK(nothing.known);
  const Cost nothing_priced = ComputeCost(std::nullopt, Usage{}, PriceTable{3, 15, 0.3});
  CHECK(nothing_priced.usd == 0);
  CHECK(nothing_priced.known);
}

TEST_CASE("ParsePriceTable reads the three keys", "[failure]") {
  const PriceTable full = ParsePriceTable(nlohmann::json::parse(
      R"({"input_per_mtok": 3, "output_per_mtok": 15.5, "cache_read_per_mtok": 0.3, "x": 1})"));
  CHECK(full.input_per_mtok == 3.0);
  CHECK(full.output_per_mtok == 15.5);
  CHECK(full.cache_read_per_mtok == Approx(0.3));
  const PriceTable partial =
      ParsePriceTable(nlohmann::json::parse(R"({"output_per_mtok": 2, "input_per_mtok": null})"));
  CHECK(partial.input_per_mtok == 0);
  CHECK(partial.output_per_mtok == 2.0);
  CHECK(partial.cache_read_per_mtok == 0);
  const PriceTable none = ParsePriceTable(nlohmann::json());
  CHECK(none.input_per_mtok == 0);
  CHECK(ParsePriceTable(nlohmann::json::object()).output_per_mtok == 0);

  CHECK_THROWS_AS(ParsePriceTable(nlohmann::json::parse(R"({"input_per_mtok": "3"})")),
                  std::invalid_argument);
  CHECK_THROWS_AS(ParsePriceTable(nlohmann::json::parse(R"({"output_per_mtok": -1})")),
                  std::invalid_argument);
  CHECK_THROWS_AS(ParsePriceTable(nlohmann::json::parse("[1, 2, 3]")), std::invalid_argument);
  CHECK_THROWS_AS(ParsePriceTable(nlohmann::json(4)), std::invalid_argument);
}

using Caps = std::vector<std::tuple<std::string, double, double>>;

TEST_CASE("CheckCaps: passes under every cap and ignores absent caps", "[failure]") {
  CHECK(CheckCaps({}, 100).ok);
  const BudgetCheck ok = CheckCaps(Caps{{"dispatch", 1.0, 0.0},
                                        {"task", 5.0, 2.0},
                                        {"session", 0.0, 999.0},
                                        {"family_day", -1.0, 50.0}},
                                   0.5);
  CHECK(ok.ok);
  CHECK(ok.cap_name.empty());
  // Reaching a cap exactly is allowed, despite binary rounding (0.1 + 0.2 vs 0.3).
  CHECK(CheckCaps(Caps{{"task", 1.0, 0.6}}, 0.4).ok);
  CHECK(CheckCaps(Caps{{"task", 0.3, 0.1}}, 0.2).ok);
}

TEST_CASE("CheckCaps: refuses on the first cap that would be exceeded", "[failure]") {
  const BudgetCheck over =
      CheckCaps(Caps{{"dispatch", 1.0, 0.0}, {"task", 5.0, 4.8}, {"session", 5.0, 4.9}}, 0.5);
  CHECK_FALSE(over.ok);
  CHECK(over.cap_name == "task");
  CHECK(over.cap == 5.0);
  CHECK(over.spent == 4.8);

  // Already at the cap: refused even with a zero estimate.
  const BudgetCheck at = CheckCaps(Caps{{"session", 10.0, 10.0}}, 0.0);
  CHECK_FALSE(at.ok);
  CHECK(at.cap_name == "session");
  CHECK_FALSE(CheckCaps(Caps{{"session", 10.0, 12.0}}, 0.0).ok);
  // Negative or NaN estimates count as zero.
  CHECK(CheckCaps(Caps{{"task", 1.0, 0.5}}, -3.0).ok);
  CHECK(CheckCaps(Caps{{"task", 1.0, 0.5}}, std::numeric_limits<double>::quiet_NaN()).ok);
  CHECK_FALSE(CheckCaps(Caps{{"task", 1.0, 1.0}}, -3.0).ok);
  // Just over by more than the slack is refused.
  CHECK_FALSE(CheckCaps(Caps{{"task", 1.0, 0.6}}, 0.4001).ok);
  // An absent cap before a binding one is skipped.
  const BudgetCheck skip =
      CheckCaps(Caps{{"dispatch", 0.0, 0.0}, {"family_day", 20.0, 19.99}}, 0.02);
  CHECK_FALSE(skip.ok);
  CHECK(skip.cap_name == "family_day");
}

}  // namespace
}  // namespace conclave::domain
