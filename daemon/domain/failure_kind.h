// Contract: the closed classification of a finished dispatch (DESIGN §1 "Failure policy").
// Operational kinds never count toward the circuit breaker and are retried with backoff;
// counted kinds mean the worker ran and failed and feed the breaker; kNone (success),
// kCancelled and kBudgetExceeded are neither. Names are stable snake_case strings stored
// in the database and shown to users: never rename one.
#ifndef CONCLAVE_DOMAIN_FAILURE_KIND_H_
#define CONCLAVE_DOMAIN_FAILURE_KIND_H_

#include <optional>
#include <string_view>

namespace conclave::domain {

enum class FailureKind {
  kNone,
  kSpawnFailed,
  kTransportError,
  kRateLimited,
  kProviderUnavailable,
  kAuthError,
  kTimeout,
  kHeartbeatLost,
  kInterrupted,
  kCancelled,
  kWorkerFailed,
  kContractViolation,
  kNonZeroExit,
  kClaimNotPersisted,
  kBudgetExceeded,
  kInternalError,  // the daemon could not record the outcome (operational; never retried)
  kWorkerBlocked,  // the worker reported BLOCKED: a question for the coordinator, not counted
  kCrashLoop,      // conclaved died uncleanly 3 times soon after this task's dispatch started
                   // (operational; never retried: domain/crash_loop)
};

// Stable snake_case name, e.g. "rate_limited", "nonzero_exit".
std::string_view FailureKindName(FailureKind kind);

// Inverse of FailureKindName (exact, case-sensitive); nullopt for unknown names.
std::optional<FailureKind> ParseFailureKind(std::string_view name);

// True for the closed operational list: spawn_failed, transport_error, rate_limited,
// provider_unavailable, auth_error, timeout, heartbeat_lost, interrupted, internal_error,
// crash_loop.
bool IsOperational(FailureKind kind);

// True for failures that count toward the breaker: worker_failed, contract_violation,
// nonzero_exit, claim_not_persisted.
bool IsCounted(FailureKind kind);

}  // namespace conclave::domain

#endif  // CONCLAVE_DOMAIN_FAILURE_KIND_H_
