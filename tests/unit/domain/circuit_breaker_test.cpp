// Unit tests: the per-task circuit breaker (domain/circuit_breaker).
#include <catch2/catch.hpp>

#include "failure_kinds.h"
#include <string>
#include <vector>

#include "domain/circuit_breaker.h"

namespace conclave::domain {
namespace {
using namespace testing_kinds;

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

}  // namespace
}  // namespace conclave::domain
