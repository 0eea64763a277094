// Unit tests: debate termination (domain/debate).
#include <catch2/catch.hpp>

#include "domain/debate.h"

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

TEST_CASE("debate: cap 0 stops after the primary, converged", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")})};
  CHECK(EvaluateDebate(rounds, 0) == Termination::kConverged);
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(EvaluateDebate({}, 2) == Termination::kContinue);
  CHECK(NextRoundNumber({}) == 0);
  CHECK_FALSE(NextIsForeign({}));
  CHECK(NextRoundNumber(rounds) == 1);
  CHECK(NextIsForeign(rounds));
}

TEST_CASE("debate: a challenger that adds nothing and agrees converges at once", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")}),
                                     R(1, {F("A1", Severity::kMedium, Stance::kAgree)})};
  CHECK(EvaluateDebate(rounds, 2) == Termination::kConverged);
  CHECK(DisagreementFingerprint(rounds).empty());
}

TEST_CASE("debate: converges in round 3", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")})};
  rounds.push_back(R(1, {F("A1", Severity::kMedium, Stance::kRebut), F("B1")}));
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"A1"});
  rounds.push_back(R(2, {F("A1", Severity::kMedium, Stance::kWithdraw),
                         F("B1", Severity::kMedium, Stance::kRebut)}));
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"B1"});
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(NextIsForeign(rounds));
  rounds.push_back(R(3, {F("B1", Severity::kMedium, Stance::kWithdraw)}));
  CHECK(EvaluateDebate(rounds, 2) == Termination::kConverged);
  CHECK(CheckRoundSequence(rounds).empty());
}

TEST_CASE("debate: the same disagreement over two round pairs stops early", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1"), F("A2")})};
  rounds.push_back(R(1, {F("A1", Severity::kMedium, Stance::kRebut)}));
  rounds.push_back(R(2, {F("A1", Severity::kMedium, Stance::kRebut)}));
  const std::string first = DisagreementFingerprint(rounds);
  CHECK(first.rfind("dfp:", 0) == 0);
  CHECK(EvaluateDebate(rounds, 5) == Termination::kContinue);
  rounds.push_back(R(3, {F("A1", Severity::kMedium, Stance::kRebut)}));
  CHECK(EvaluateDebate(rounds, 5) == Termination::kContinue);
  rounds.push_back(R(4, {}));  // silence does not concede
  CHECK(DisagreementFingerprint(rounds) == first);
  CHECK(EvaluateDebate(rounds, 5) == Termination::kNoMovement);
}

TEST_CASE("debate: cap reached with disagreement open", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1"), F("A2")}),
                                     R(1, {F("A1", Severity::kMedium, Stance::kRebut)}),
                                     R(2, {F("A1", Severity::kMedium, Stance::kRebut)})};
  CHECK(EvaluateDebate(rounds, 1) == Termination::kCapReached);
  // Movement (a different dispute) but the cap is spent.
  rounds.push_back(R(
      3, {F("A1", Severity::kMedium, Stance::kAgree), F("A2", Severity::kMedium, Stance::kRebut)}));
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);            // the primary answers last
  rounds.push_back(R(4, {F("A2", Severity::kMedium, Stance::kAgree)}));  // owner agree ≠ concede
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"A2"});
  CHECK(EvaluateDebate(rounds, 2) == Termination::kCapReached);
}

TEST_CASE("debate: new primary findings get a challenge unless the cap is spent", "[review]") {
  std::vector<RoundRecord> rounds = {R(0, {F("A1")}), R(1, {F("B1")}),
                                     R(2, {F("B1", Severity::kMedium, Stance::kAgree), F("A3")})};
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  CHECK(EvaluateDebate(rounds, 1) == Termination::kConverged);
}

TEST_CASE("debate: rebut through refs, fingerprint order independence", "[review]") {
  Finding rebut = F("B9", Severity::kLow, Stance::kRebut);
  rebut.refs = {"A1"};
  std::vector<RoundRecord> rounds = {R(0, {F("A1"), F("A2")}), R(1, {rebut})};
  CHECK(OpenDisputes(rounds) == std::vector<std::string>{"A1"});
  std::vector<RoundRecord> ab = {
      R(0, {F("A1"), F("A2")}),
      R(1, {F("A1", Severity::kLow, Stance::kRebut), F("A2", Severity::kLow, Stance::kRebut)})};
  std::vector<RoundRecord> ba = {
      R(0, {F("A2"), F("A1")}),
      R(1, {F("A2", Severity::kLow, Stance::kRebut), F("A1", Severity::kLow, Stance::kRebut)})};
  CHECK(DisagreementFingerprint(ab) == DisagreementFingerprint(ba));
  CHECK(DisagreementFingerprint(ab) != DisagreementFingerprint(rounds));
  CHECK_FALSE(CheckRoundSequence({R(0, {}), R(2, {})}).empty());
  CHECK(ParseTermination("no_movement") == Termination::kNoMovement);
  CHECK(TerminationName(Termination::kCapReached) == "cap_reached");
}

}  // namespace
}  // namespace conclave::domain
