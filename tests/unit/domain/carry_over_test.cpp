// No re-rolls: a carried foreign finding closes only by its own family's withdraw or fixed.
#include <catch2/catch.hpp>

#include "domain/carry_over.h"

namespace conclave::domain {
namespace {

ReconciledFinding Open(std::string id, std::string family, Severity s = Severity::kBlocker) {
  ReconciledFinding f;
  f.finding.id = std::move(id);
  f.finding.severity = s;
  f.finding.category = "security";
  f.finding.title = "t";
  f.family = std::move(family);
  f.from_foreign = true;
  f.disposition = std::string(kAdoptedSingle);
  f.open = true;
  return f;
}

Finding Answer(std::string id, Stance stance) {
  Finding f;
  f.id = std::move(id);
  f.severity = Severity::kLow;
  f.category = "security";
  f.title = "answer";
  f.stance = stance;
  return f;
}

TEST_CASE("carry-over: only the finding's own family closes it, by withdraw or fixed",
          "[review][carry]") {
  const std::vector<ReconciledFinding> carried = {Open("r0.openai.B1", "openai")};
  struct Case {
    std::string family;
    Stance stance;
    bool open;
  };
  for (const Case& c : std::vector<Case>{{"openai", Stance::kFixed, false},
                                         {"OpenAI", Stance::kWithdraw, false},
                                         {"openai", Stance::kStillPresent, true},
                                         {"openai", Stance::kAgree, true},
                                         {"anthropic", Stance::kFixed, true},
                                         {"deepseek", Stance::kWithdraw, true},
                                         {"anthropic", Stance::kRebut, true}}) {
    std::vector<CarriedAnswer> answers;
    auto rest = TakeCarriedAnswers({Answer("r0.openai.B1", c.stance), Answer("r2.x.F1", Stance::kNew)},
                                   c.family, IdsOf(carried), &answers);
    CHECK(rest.size() == 1);  // the round's own finding stays with the round
    auto after = ApplyCarriedAnswers(carried, answers);
    REQUIRE(after.size() == 1);
    INFO(c.family << " " << StanceName(c.stance));
    CHECK(after[0].open == c.open);
    CHECK(after[0].carried);
    CHECK(after[0].finding.severity == Severity::kBlocker);  // the recorded severity stands
  }
}

TEST_CASE("carry-over: silence leaves a carried finding open, the latest own answer counts",
          "[review][carry]") {
  const std::vector<ReconciledFinding> carried = {Open("r0.openai.B1", "openai")};
  CHECK(ApplyCarriedAnswers(carried, {})[0].open);
  std::vector<CarriedAnswer> answers = {{"openai", Answer("r0.openai.B1", Stance::kFixed)},
                                        {"openai", Answer("r0.openai.B1", Stance::kStillPresent)}};
  auto after = ApplyCarriedAnswers(carried, answers);
  CHECK(after[0].open);
  CHECK(after[0].answers == std::vector<std::string>{"openai:fixed", "openai:still_present"});
}

TEST_CASE("carry-over: what a revision carries, and the stored form round-trips",
          "[review][carry]") {
  auto same = Open("r0.anthropic.A1", "anthropic");
  same.from_foreign = false;
  auto closed = Open("r1.openai.C1", "openai");
  closed.open = false;
  auto kept = Open("r1.openai.B2", "openai", Severity::kHigh);
  kept.profile = "codex";
  kept.role = "challenger";
  kept.revision = 3;
  kept.answers = {"openai:still_present"};
  auto carried = OpenForeign({same, closed, kept});
  REQUIRE(carried.size() == 1);
  CHECK(carried[0].finding.id == "r1.openai.B2");
  auto text = ReconciledListToJson(carried).dump();
  auto back = ReconciledListFromText(text);
  REQUIRE(back.size() == 1);
  CHECK(back[0].profile == "codex");
  CHECK(back[0].role == "challenger");
  CHECK(back[0].revision == 3);
  CHECK(back[0].from_foreign);
  CHECK(back[0].answers == kept.answers);
  CHECK(back[0].finding.severity == Severity::kHigh);
}

}  // namespace
}  // namespace conclave::domain
