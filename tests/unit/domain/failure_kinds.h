// The failure kinds, grouped as DESIGN §1 lists them (shared by the domain unit tests).
#pragma once

#include "domain/failure_kind.h"

namespace conclave::domain::testing_kinds {

constexpr FailureKind kAllKinds[] = {
    FailureKind::kNone,        FailureKind::kSpawnFailed,         FailureKind::kTransportError,
    FailureKind::kRateLimited, FailureKind::kProviderUnavailable, FailureKind::kAuthError,
    FailureKind::kTimeout,     FailureKind::kHeartbeatLost,       FailureKind::kInterrupted,
    FailureKind::kCancelled,   FailureKind::kWorkerFailed,        FailureKind::kContractViolation,
    FailureKind::kNonZeroExit, FailureKind::kClaimNotPersisted,   FailureKind::kBudgetExceeded,
    FailureKind::kInternalError, FailureKind::kWorkerBlocked, FailureKind::kCrashLoop,
};

constexpr FailureKind kOperationalKinds[] = {
    FailureKind::kSpawnFailed,         FailureKind::kTransportError, FailureKind::kRateLimited,
    FailureKind::kProviderUnavailable, FailureKind::kAuthError,      FailureKind::kTimeout,
    FailureKind::kHeartbeatLost,       FailureKind::kInterrupted,    FailureKind::kInternalError,
    FailureKind::kCrashLoop,
};

constexpr FailureKind kCountedKinds[] = {
    FailureKind::kWorkerFailed,
    FailureKind::kContractViolation,
    FailureKind::kNonZeroExit,
    FailureKind::kClaimNotPersisted,
};

// Neither counted nor operational, and not a success.
constexpr FailureKind kNeutralKinds[] = {FailureKind::kCancelled, FailureKind::kBudgetExceeded,
                                         FailureKind::kWorkerBlocked};

}  // namespace conclave::domain::testing_kinds
