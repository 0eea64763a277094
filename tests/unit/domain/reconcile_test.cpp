// Unit tests: reconciliation, parallel synthesis and the fail-closed gate (domain/reconcile).
#include <catch2/catch.hpp>

#include "domain/debate.h"
#include "domain/reconcile.h"

namespace conclave::domain {
namespace {

Finding F(std::string id, Severity severity = Severity::kMedium, Stance stance = Stance::kNew,
          std::string path = "src/a.cpp", int line = 10, std::string category = "correctness") {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.category = std::move(category);
  f.path = std::move(path);
  f.line = line;
  f.title = "t";
  f.stance = stance;
  return f;
}

// Writer and primary are anthropic (same-source primary); challengers are deepseek.
RoundRecord R(int round, std::vector<Finding> findings, std::string family = "") {
  if (family.empty()) family = round % 2 == 1 ? "deepseek" : "anthropic";
  return RoundRecord{round, round % 2 == 1, std::move(findings), std::move(family)};
}

TEST_CASE("materially different rubric", "[review]") {
  const Finding a = F("A", Severity::kHigh, Stance::kNew, "src/a.cpp", 10);
  CHECK(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 13)));
  CHECK_FALSE(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 14)));
  CHECK(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 0)));
  CHECK_FALSE(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/b.cpp", 10)));
  CHECK_FALSE(Overlaps(a, F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 10, "security")));
  CHECK(IsMateriallyDifferent(a, {F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 20)}));
  CHECK_FALSE(IsMateriallyDifferent(a, {F("B", Severity::kLow, Stance::kNew, "src/a.cpp", 8)}));
}

TEST_CASE("reconcile: dispositions and provenance", "[review]") {
  std::vector<RoundRecord> rounds = {
      R(0, {F("A1", Severity::kMedium), F("A2", Severity::kLow, Stance::kNew, "src/b.cpp", 5),
            F("A3", Severity::kLow, Stance::kNew, "docs/x.md", 1, "docs")}),
      R(1, {F("A1", Severity::kHigh, Stance::kAgree),
            F("B1", Severity::kMajor, Stance::kNew, "src/b.cpp", 7),
            F("B2", Severity::kHigh, Stance::kNew, "src/c.cpp", 1, "security")})};
  const std::vector<ReconciledFinding> out = Reconcile(rounds, "anthropic");
  REQUIRE(out.size() == 5);
  CHECK(out[0].finding.id == "A1");
  CHECK(out[0].disposition == kAdoptedBoth);
  CHECK(out[0].finding.severity == Severity::kHigh);  // stricter of the holding versions
  CHECK(out[0].from_foreign);
  CHECK(out[1].disposition == kAdoptedBoth);  // A2 ~ B1 by overlap
  CHECK(out[1].overlaps == std::vector<std::string>{"B1"});
  CHECK(out[2].disposition == kAdoptedPrimary);
  CHECK_FALSE(out[2].from_foreign);
  CHECK(out[3].disposition == kAdoptedBoth);
  CHECK(out[4].disposition == kEscalatedForeign);
  CHECK(out[4].family == "deepseek");
  CHECK(out[4].round == 1);
  CHECK(out[4].open);
  const auto unique = UniqueFindingsPerFamily(out);
  CHECK(unique.at("anthropic") == 1);  // A3
  CHECK(unique.at("deepseek") == 1);   // B2
}

TEST_CASE("reconcile: the primary cannot dismiss a foreign finding", "[review]") {
  std::vector<RoundRecord> rounds = {
      R(0, {}), R(1, {F("B1", Severity::kHigh)}),
      R(2, {F("B1", Severity::kLow, Stance::kRebut), F("B1", Severity::kLow, Stance::kWithdraw)})};
  std::vector<ReconciledFinding> out = Reconcile(rounds, "anthropic");
  REQUIRE(out.size() == 1);
  CHECK(out[0].open);
  CHECK(out[0].finding.severity == Severity::kHigh);
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);  // a challenger has the floor
  GateInput gate{false, EvaluateDebate(rounds, 1), out, false};
  CHECK(ComputeVerdict(gate) == Verdict::kBlocked);
  // Another challenger family cannot withdraw it either.
  rounds.push_back(R(3, {F("B1", Severity::kHigh, Stance::kWithdraw)}, "zhipu"));
  CHECK(Reconcile(rounds, "anthropic")[0].open);
  // The foreign reviewer withdrawing it on re-review closes it.
  rounds.back().family = "deepseek";
  out = Reconcile(rounds, "anthropic");
  CHECK_FALSE(out[0].open);
  gate = GateInput{false, EvaluateDebate(rounds, 2), out, false};
  CHECK(gate.termination == Termination::kConverged);
  CHECK(ComputeVerdict(gate) == Verdict::kApproved);
}

TEST_CASE("parallel synthesis: stricter severity wins on overlap", "[review]") {
  const std::vector<LineFindings> lines = {
      {"luna",
       "openai",
       {F("L1", Severity::kMedium), F("L2", Severity::kInfo, Stance::kNew, "src/z.cpp", 1)}},
      {"qwen-max", "alibaba", {F("Q1", Severity::kHigh, Stance::kNew, "src/a.cpp", 12)}}};
  const std::vector<ReconciledFinding> out = SynthesizeParallel(lines, "deepseek");
  REQUIRE(out.size() == 3);
  CHECK(out[0].finding.severity == Severity::kHigh);
  CHECK(out[0].disposition == kAdoptedBoth);
  CHECK(out[1].disposition == kAdoptedSingle);
  CHECK(out[2].finding.severity == Severity::kHigh);
  CHECK(out[2].from_foreign);
  CHECK(ComputeVerdict({false, Termination::kConverged, out, false}) == Verdict::kBlocked);
}

TEST_CASE("gate: fail-closed verdicts", "[review]") {
  ReconciledFinding primary_high;
  primary_high.finding = F("A1", Severity::kHigh);
  primary_high.family = "anthropic";
  primary_high.disposition = std::string(kAdoptedPrimary);
  primary_high.open = true;
  ReconciledFinding low = primary_high;
  low.finding.severity = Severity::kLow;
  ReconciledFinding info = primary_high;
  info.finding.severity = Severity::kInfo;
  CHECK(ComputeVerdict({true, Termination::kConverged, {}, false}) == Verdict::kGateAbsent);
  CHECK(ComputeVerdict({false, Termination::kContinue, {}, false}) == Verdict::kGateAbsent);
  CHECK(ComputeVerdict({false, Termination::kCapReached, {}, false}) == Verdict::kStalemate);
  CHECK(DecideGate({false, Termination::kCapReached, {}, false}).escalate);
  CHECK(ComputeVerdict({false, Termination::kConverged, {primary_high}, false}) ==
        Verdict::kNeedsChanges);
  ReconciledFinding primary_blocker = primary_high;
  primary_blocker.finding.severity = Severity::kBlocker;
  CHECK(ComputeVerdict({false, Termination::kNoMovement, {primary_blocker}, false}) ==
        Verdict::kBlocked);
  CHECK(ComputeVerdict({false, Termination::kConverged, {low}, false}) == Verdict::kNeedsChanges);
  CHECK(ComputeVerdict({false, Termination::kConverged, {low}, false, false}) ==
        Verdict::kApproved);
  CHECK(ComputeVerdict({false, Termination::kConverged, {info}, false}) == Verdict::kApproved);
  primary_high.open = false;
  CHECK(ComputeVerdict({false, Termination::kConverged, {primary_high}, false}) ==
        Verdict::kApproved);
  const GateDecision skip = DecideGate({false, Termination::kConverged, {}, true});
  CHECK(skip.verdict == Verdict::kApproved);
  CHECK_THAT(skip.reason, Catch::Contains("mechanical"));
  CHECK(VerdictName(Verdict::kStalemate) == "adversarial-stalemate");
  CHECK(ParseVerdict("gate-absent") == Verdict::kGateAbsent);
}

}  // namespace
}  // namespace conclave::domain
