// Contract: see circuit_breaker.h.
#include "domain/circuit_breaker.h"

#include <algorithm>
#include <utility>

namespace conclave::domain {

BreakerState FoldAttempt(BreakerState state, const AttemptOutcome& outcome, int threshold) {
  if (state.open) return state;
  if (outcome.kind == FailureKind::kNone) return BreakerState{};
  if (!IsCounted(outcome.kind)) return state;
  if (state.consecutive > 0 && state.fingerprint == outcome.fingerprint) {
    ++state.consecutive;
  } else {
    state.consecutive = 1;
    state.fingerprint = outcome.fingerprint;
  }
  state.open = state.consecutive >= std::max(threshold, 1);
  return state;
}

BreakerState ReplayAttempts(const std::vector<AttemptOutcome>& attempts, int threshold) {
  BreakerState state;
  for (const AttemptOutcome& attempt : attempts) {
    state = FoldAttempt(std::move(state), attempt, threshold);
  }
  return state;
}

bool IsReplan(const PlanChange& change) {
  return change.hypothesis_changed || change.scope_changed || change.validation_changed;
}

BreakerState ApplyPlanChange(BreakerState state, const PlanChange& change) {
  return IsReplan(change) ? BreakerState{} : state;
}

}  // namespace conclave::domain
