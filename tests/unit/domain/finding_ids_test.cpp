// Finding identity is the daemon's: namespaced per round and family; answers name full ids.
#include <catch2/catch.hpp>

#include "domain/debate.h"
#include "domain/finding_ids.h"
#include "domain/reconcile.h"

namespace conclave::domain {
namespace {

Finding F(std::string id, Stance stance, std::vector<std::string> refs = {}) {
  Finding f;
  f.id = std::move(id);
  f.severity = Severity::kMedium;
  f.category = "correctness";
  f.path = "src/a.cpp";
  f.line = 10;
  f.title = "t";
  f.stance = stance;
  f.refs = std::move(refs);
  return f;
}

TEST_CASE("finding ids: new findings are named r<round>.<family>.<id>", "[review][ids]") {
  CHECK(FindingIdPrefix(2, "OpenAI") == "r2.openai.");
  CHECK(FindingIdPrefix(0, "") == "r0.unknown.");
  auto out = NamespaceFindings(2, "openai", {F("F1", Stance::kNew), F("bad id!", Stance::kNew)}, {});
  REQUIRE(out.size() == 2);
  CHECK(out[0].id == "r2.openai.F1");
  CHECK(out[1].id == "r2.openai.bad_id_");
  CHECK(out[0].stance == Stance::kNew);
}

TEST_CASE("finding ids: an answer names the full id, a reused bare id is a new finding",
          "[review][ids]") {
  const std::set<std::string> known = {"r0.anthropic.F1"};
  auto out = NamespaceFindings(1, "openai",
                               {F("r0.anthropic.F1", Stance::kAgree), F("F1", Stance::kAgree),
                                F("X", Stance::kRebut, {"r0.anthropic.F1", "nope"}),
                                F("F9", Stance::kWithdraw), F("F8", Stance::kFixed)},
                               known);
  REQUIRE(out.size() == 3);
  CHECK(out[0].id == "r0.anthropic.F1");  // an answer to the primary's F1
  CHECK(out[0].stance == Stance::kAgree);
  CHECK(out[1].id == "r1.openai.F1");  // the same bare id: a finding of its own
  CHECK(out[1].stance == Stance::kNew);
  CHECK(out[2].id == "r0.anthropic.F1");  // named through refs
  CHECK(out[2].stance == Stance::kRebut);
  CHECK(out[2].refs == std::vector<std::string>{"r0.anthropic.F1"});
}

TEST_CASE("finding ids: two reviewers both saying F1 do not agree by accident", "[review][ids]") {
  // Round 0 the primary raises F1; round 1 the challenger raises its own F1 — with the
  // daemon's ids they are two findings and the challenger round brought a new one, so the
  // debate does not stop as converged.
  auto a = NamespaceFindings(0, "anthropic", {F("F1", Stance::kNew)}, {});
  auto b = NamespaceFindings(1, "openai", {F("F1", Stance::kNew)}, {a[0].id});
  std::vector<RoundRecord> rounds = {{0, false, a, "anthropic"}, {1, true, b, "openai"}};
  CHECK(BuildThreads(rounds).size() == 2);
  CHECK(EvaluateDebate(rounds, 2) == Termination::kContinue);
  // With bare ids (what the daemon no longer does) the same answers would have merged.
  std::vector<RoundRecord> bare = {{0, false, {F("F1", Stance::kNew)}, "anthropic"},
                                   {1, true, {F("F1", Stance::kNew)}, "openai"}};
  CHECK(BuildThreads(bare).size() == 1);
  CHECK(EvaluateDebate(bare, 2) == Termination::kConverged);
}

}  // namespace
}  // namespace conclave::domain
