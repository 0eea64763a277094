// Contract: retry policy for operational failures (DESIGN §1 "Failure policy", issue 4).
// Exponential backoff with deterministic jitter (the caller supplies the random bits, so
// the function is pure and testable). Counted failures are never retried here; auth_error
// is never retried (it escalates at once: retrying cannot fix a bad key).
#ifndef CONCLAVE_DOMAIN_BACKOFF_H_
#define CONCLAVE_DOMAIN_BACKOFF_H_

#include <chrono>
#include <cstdint>

#include "domain/failure_kind.h"

namespace conclave::domain {

struct BackoffPolicy {
  int base_ms = 2000;
  int max_ms = 120000;
  int max_attempts = 4;  // Total tries including the first one: 4 = at most 3 retries.
  double jitter = 0.2;   // Fraction in [0, 1]; values outside are clamped.
};

// Delay before retry number `retry_number` (1-based; values < 1 are treated as 1):
// min(base_ms * 2^(retry_number-1), max_ms) scaled by (1 + f), with f uniform in
// [-jitter, +jitter) taken from the top 53 bits of random_bits. The result is always within
// [0, floor(max_ms * (1 + jitter))]; negative policy values count as 0.
std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int retry_number,
                                       uint64_t random_bits);

// True when `kind` is operational (but not auth_error) and another try stays within
// max_attempts, i.e. operational_retries_so_far + 1 < max_attempts.
bool ShouldRetry(const BackoffPolicy& policy, FailureKind kind, int operational_retries_so_far);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_BACKOFF_H_
