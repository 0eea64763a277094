// Unit tests: failure kinds (domain/failure_kind) — stored names and the closed lists.
#include <catch2/catch.hpp>

#include "failure_kinds.h"
#include <string>
#include <utility>
#include <vector>

#include "domain/failure_kind.h"

namespace conclave::domain {
namespace {
using namespace testing_kinds;

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
      {FailureKind::kInternalError, "internal_error"},
      {FailureKind::kWorkerBlocked, "worker_blocked"},
      {FailureKind::kCrashLoop, "crash_loop"},
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
  CHECK(operational == 10);
  CHECK(counted == 4);
  for (FailureKind kind : kOperationalKinds) CHECK(IsOperational(kind));
  for (FailureKind kind : kCountedKinds) CHECK(IsCounted(kind));
  for (FailureKind kind :
       {FailureKind::kNone, FailureKind::kCancelled, FailureKind::kBudgetExceeded}) {
    CHECK_FALSE(IsOperational(kind));
    CHECK_FALSE(IsCounted(kind));
  }
}

}  // namespace
}  // namespace conclave::domain
