// Contract: see failure_kind.h. One table maps every FailureKind to its stored name.
#include "domain/failure_kind.h"

#include <array>
#include <utility>

namespace conclave::domain {
namespace {

constexpr std::array<std::pair<FailureKind, std::string_view>, 18> kNames = {{
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
    {FailureKind::kInternalError, "internal_error"},
    {FailureKind::kWorkerBlocked, "worker_blocked"},
    {FailureKind::kCrashLoop, "crash_loop"},
}};

}  // namespace

std::string_view FailureKindName(FailureKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<FailureKind> ParseFailureKind(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

bool IsOperational(FailureKind kind) {
  switch (kind) {
    case FailureKind::kSpawnFailed:
    case FailureKind::kTransportError:
    case FailureKind::kRateLimited:
    case FailureKind::kProviderUnavailable:
    case FailureKind::kAuthError:
    case FailureKind::kTimeout:
    case FailureKind::kHeartbeatLost:
    case FailureKind::kInterrupted:
    case FailureKind::kInternalError:
    case FailureKind::kCrashLoop:
      return true;
    default:
      return false;
  }
}

bool IsCounted(FailureKind kind) {
  switch (kind) {
    case FailureKind::kWorkerFailed:
    case FailureKind::kContractViolation:
    case FailureKind::kNonZeroExit:
    case FailureKind::kClaimNotPersisted:
      return true;
    default:
      return false;
  }
}

}  // namespace conclave::domain
