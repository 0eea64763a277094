// Unit tests: backoff and retry bounds (domain/backoff).
#include <catch2/catch.hpp>

#include "failure_kinds.h"
#include <chrono>
#include <cstdint>
#include <limits>

#include "domain/backoff.h"

namespace conclave::domain {
namespace {
using namespace testing_kinds;

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

TEST_CASE("ShouldRetry: operational kinds only, never auth_error, internal_error or crash_loop, "
          "bounded",
          "[failure]") {
  const BackoffPolicy p;  // max_attempts = 4 -> at most 3 retries.
  for (FailureKind kind : kAllKinds) {
    INFO(FailureKindName(kind));
    // A bad key cannot be fixed by retrying; neither can the daemon failing to record a run
    // or dying again and again while it runs.
    const bool retryable = IsOperational(kind) && kind != FailureKind::kAuthError &&
                           kind != FailureKind::kInternalError &&
                           kind != FailureKind::kCrashLoop;
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

}  // namespace
}  // namespace conclave::domain
