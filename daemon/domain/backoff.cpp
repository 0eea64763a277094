// Contract: see backoff.h. All arithmetic is done in int64/double so that large retry
// numbers or policy values cannot overflow.
#include "domain/backoff.h"

#include <algorithm>
#include <cmath>

namespace conclave::domain {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int retry_number,
                                       uint64_t random_bits) {
  const int64_t max_ms = std::max(policy.max_ms, 0);
  const double jitter = std::isnan(policy.jitter) ? 0.0 : std::clamp(policy.jitter, 0.0, 1.0);

  int64_t delay = std::min<int64_t>(std::max(policy.base_ms, 0), max_ms);
  for (int n = 1; n < retry_number && delay > 0 && delay < max_ms; ++n) {
    delay = std::min(delay * 2, max_ms);
  }

  const double unit = static_cast<double>(random_bits >> 11) * 0x1.0p-53;  // [0, 1)
  const double factor = 1.0 + (2.0 * unit - 1.0) * jitter;
  const auto upper = static_cast<int64_t>(std::floor(static_cast<double>(max_ms) * (1 + jitter)));
  const int64_t jittered = std::llround(static_cast<double>(delay) * factor);
  return std::chrono::milliseconds(std::clamp<int64_t>(jittered, 0, upper));
}

bool ShouldRetry(const BackoffPolicy& policy, FailureKind kind, int operational_retries_so_far) {
  if (!IsOperational(kind) || kind == FailureKind::kAuthError ||
      kind == FailureKind::kInternalError || kind == FailureKind::kCrashLoop) {
    return false;
  }
  return std::max(operational_retries_so_far, 0) + 1 < policy.max_attempts;
}

}  // namespace conclave::domain
