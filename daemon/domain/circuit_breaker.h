// Contract: the per-task circuit breaker (DESIGN §1 "Failure policy", issue 4).
// Pure folds over finished attempts: kBreakerThreshold consecutive counted failures with one
// fingerprint open the breaker; a counted failure with another fingerprint restarts the
// series at 1; operational failures, cancellations and budget refusals neither count nor
// reset; a success resets to 0. An open breaker is latched: FoldAttempt leaves it unchanged
// (dispatch is refused while open) and only a re-plan (ApplyPlanChange) closes it.
#ifndef CONCLAVE_DOMAIN_CIRCUIT_BREAKER_H_
#define CONCLAVE_DOMAIN_CIRCUIT_BREAKER_H_

#include <string>
#include <vector>

#include "domain/failure_kind.h"

namespace conclave::domain {

struct AttemptOutcome {
  FailureKind kind = FailureKind::kNone;
  std::string fingerprint;  // Empty unless IsCounted(kind).
};

struct BreakerState {
  int consecutive = 0;      // Length of the current same-fingerprint counted series.
  std::string fingerprint;  // Fingerprint of that series; empty when consecutive == 0.
  bool open = false;

  friend bool operator==(const BreakerState&, const BreakerState&) = default;
};

constexpr int kBreakerThreshold = 5;

// Folds one finished attempt into the state: counted failure with same fingerprint
// increments, different fingerprint resets to 1 with the new one, operational
// failures/cancelled/budget neither count nor reset, success (kNone) resets to 0. open
// becomes true when consecutive >= threshold (a threshold below 1 is treated as 1).
// An already open state is returned unchanged.
BreakerState FoldAttempt(BreakerState state, const AttemptOutcome& outcome,
                         int threshold = kBreakerThreshold);

// Folds the attempts, oldest first, from a closed state. Pass only the attempts made since
// the task's last re-plan.
BreakerState ReplayAttempts(const std::vector<AttemptOutcome>& attempts,
                            int threshold = kBreakerThreshold);

// A re-plan = hypothesis, scope or validation changed. Changing only profile/model is not.
struct PlanChange {
  bool hypothesis_changed = false;
  bool scope_changed = false;
  bool validation_changed = false;
  bool profile_changed = false;
};

bool IsReplan(const PlanChange& change);

// On a re-plan returns a closed, zeroed state; otherwise returns the state unchanged.
BreakerState ApplyPlanChange(BreakerState state, const PlanChange& change);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_CIRCUIT_BREAKER_H_
