// Phase-0 figures checked against a hand-computed set of seven reviews (every number below is
// worked out by hand in the comments, from the rules in domain/review_figures.h).
#include <catch2/catch.hpp>

#include "domain/carry_over.h"
#include "domain/review_figures.h"

namespace conclave::domain {
namespace {

using nlohmann::json;

json Entry(std::string id, std::string severity, std::string category, std::string path, int line,
           std::string family, std::string role, std::string disposition, bool open = true) {
  return {{"id", id},       {"severity", severity}, {"category", category},
          {"location", {{"path", path}, {"line", line}}}, {"title", id},
          {"detail", ""},   {"stance", "new"},      {"refs", json::array()},
          {"family", family}, {"role", role},       {"disposition", disposition},
          {"open", open},   {"foreign", family != "anthropic"}};
}

json Said(std::string id, std::string stance) {
  return {{"id", id}, {"severity", "LOW"}, {"category", "docs"}, {"location", {{"path", ""}, {"line", 0}}},
          {"title", "t"}, {"detail", ""}, {"stance", stance}, {"refs", json::array()}};
}

ReviewRound Round(int revision, int round, std::string role, std::string profile, std::string family,
                  double cost, json findings = json::array(), RoundState state = RoundState::kDone,
                  int malformed = 0) {
  ReviewRound r;
  r.revision = revision;
  r.round = round;
  r.role = std::move(role);
  r.profile = std::move(profile);
  r.family = std::move(family);
  r.cost_usd = cost;
  r.findings = findings.dump();
  r.state = state;
  r.malformed = malformed;
  return r;
}

ReviewFacts Review(int64_t id, std::string mode, std::string verdict, std::string termination,
                   json findings, std::vector<ReviewRound> rounds, int revision = 1) {
  ReviewFacts f;
  f.review.id = id;
  f.review.mode = std::move(mode);
  f.review.writer_family = "anthropic";
  f.review.status = ReviewStatus::kDone;
  f.review.verdict = std::move(verdict);
  f.review.termination = std::move(termination);
  f.review.findings = findings.dump();
  f.review.revision = revision;
  f.rounds = std::move(rounds);
  return f;
}

std::vector<ReviewFacts> HandSet() {
  std::vector<ReviewFacts> set;
  // R1: a debate, revision 2, converged in 4 rounds; BLOCKED by a foreign HIGH.
  //   F1 both sides (adopted_both), F2 foreign only, F3 same-source only, F4 withdrawn.
  //   Challenger rounds: rev1 r1 (agree only: stamp), rev2 r1 (agree + new), rev2 r3
  //   (still_present only: stamp) → 3 rounds, 2 stamps. Cost .35.
  set.push_back(Review(
      1, "debate", "BLOCKED", "converged",
      json::array({Entry("r2.anthropic.F1", "MEDIUM", "correctness", "src/a.cpp", 10, "anthropic",
                         "primary", "adopted_both"),
                   Entry("r3.openai.F2", "HIGH", "security", "src/b.cpp", 5, "openai",
                         "challenger", "escalated_foreign"),
                   Entry("r2.anthropic.F3", "LOW", "maintainability", "src/c.cpp", 1, "anthropic",
                         "primary", "adopted_primary"),
                   Entry("r3.openai.F4", "INFO", "docs", "d.md", 1, "openai", "challenger",
                         "escalated_foreign", false)}),
      {Round(1, 0, "primary", "prim", "anthropic", 0, json::array({Said("F0", "new")})),
       Round(1, 1, "challenger", "chal", "openai", 0, json::array({Said("r0.anthropic.F0", "agree")})),
       Round(2, 0, "primary", "prim", "anthropic", .10),
       Round(2, 1, "challenger", "chal", "openai", .20,
             json::array({Said("r2.anthropic.F1", "agree"), Said("r3.openai.F2", "new")})),
       Round(2, 2, "primary", "prim", "anthropic", .05),
       Round(2, 3, "challenger", "chal", "openai", 0,
             json::array({Said("r3.openai.F2", "still_present")}))},
      2));
  // R2: a debate at its cap; the challenger rebutted (no stamp). Same-source only F1. Cost .30.
  set.push_back(Review(
      2, "debate", "adversarial-stalemate", "cap_reached",
      json::array({Entry("r0.anthropic.F1", "HIGH", "correctness", "src/a.cpp", 1, "anthropic",
                         "primary", "adopted_primary")}),
      {Round(1, 0, "primary", "prim", "anthropic", .1),
       Round(1, 1, "challenger", "chal", "openai", .1, json::array({Said("r0.anthropic.F1", "rebut")})),
       Round(1, 2, "primary", "prim", "anthropic", .1)}));
  // R3: strong parallel lines; one deepseek LOW. Not a debate, no sides. Cost .50.
  set.push_back(Review(
      3, "strong", "NEEDS_CHANGES", "parallel",
      json::array({Entry("r1.deepseek.D1", "LOW", "docs", "x.md", 1, "deepseek", "line",
                         "adopted_single")}),
      {Round(1, 0, "line", "chal", "openai", .25), Round(1, 1, "line", "third", "deepseek", .25)}));
  // R4: --measure: M1/M2 overlap (one pair: both 1, counted from the foreign side), M3 foreign
  //   only. Its challenger round is not a debate round. Cost .40.
  ReviewFacts r4 = Review(
      4, "debate", "BLOCKED", "parallel",
      json::array({Entry("r0.anthropic.M1", "MEDIUM", "correctness", "src/a.cpp", 10, "anthropic",
                         "primary", "adopted_both"),
                   Entry("r1.openai.M2", "MEDIUM", "correctness", "src/a.cpp", 11, "openai",
                         "challenger", "adopted_both"),
                   Entry("r1.openai.M3", "BLOCKER", "security", "s.cpp", 3, "openai",
                         "challenger", "adopted_single")}),
      {Round(1, 0, "primary", "prim", "anthropic", .2),
       Round(1, 1, "challenger", "chal", "openai", .2, json::array({Said("M9", "agree")}))});
  r4.review.measure = true;
  set.push_back(r4);
  // R5: mechanical: excluded, no rounds.
  set.push_back(Review(5, "mechanical", "APPROVED", "mechanical", json::array(), {}));
  // R6: gate-absent (malformed twice): excluded; chal: 1 round, 2 malformed, 1 gate-absent.
  set.push_back(Review(6, "simple", "gate-absent", "reviewer_missing", json::array(),
                       {Round(1, 0, "line", "chal", "openai", .05, json::array(),
                              RoundState::kMalformed, 2)}));
  // R7: gate-absent, later signed off: still excluded; chal: 1 failed round.
  set.push_back(Review(7, "debate", "APPROVED_BY_SIGNOFF", "reviewer_missing", json::array(),
                       {Round(1, 0, "primary", "prim", "anthropic", .01),
                        Round(1, 1, "challenger", "chal", "openai", 0, json::array(),
                              RoundState::kFailed)}));
  return set;
}

TEST_CASE("report figures match a hand-computed set of reviews", "[review][report]") {
  const json r = ReviewFigures(HandSet(), {{"chal", "openai", 9, 6, 1, 2, 1.0}});
  // Which reviews count: R1-R4; R5 mechanical, R6 and R7 gate-absent.
  CHECK(r["reviews"] == 7);
  CHECK(r["reviews_counted"] == 4);
  CHECK(r["reviews_excluded"]["mechanical"] == 1);
  CHECK(r["reviews_excluded"]["gate-absent"] == 2);
  // Unique findings: openai HIGH (R1) + BLOCKER (R4); anthropic LOW (R1) + HIGH (R2);
  // deepseek LOW (R3). adopted_both and closed entries never count.
  const json& u = r["unique_findings"]["by_family"];
  CHECK(u["openai"]["HIGH"] == 1);
  CHECK(u["openai"]["BLOCKER"] == 1);
  CHECK(u["openai"]["total"] == 2);
  CHECK(u["anthropic"]["LOW"] == 1);
  CHECK(u["anthropic"]["HIGH"] == 1);
  CHECK(u["deepseek"]["total"] == 1);
  CHECK_FALSE(u["openai"].contains("INFO"));
  CHECK(r["unique_findings_per_family"] == json({{"anthropic", 2}, {"deepseek", 1}, {"openai", 2}}));
  // Incremental value over R1, R2, R4: foreign only 1+0+1, same-source only 1+1+0, both 1+0+1.
  const json& iv = r["incremental_value"];
  CHECK(iv["reviews"] == 3);
  CHECK(iv["foreign_only"] == 2);
  CHECK(iv["same_source_only"] == 2);
  CHECK(iv["both"] == 2);
  CHECK(iv["foreign_only_per_review"]["value"].get<double>() == Approx(2.0 / 3.0));
  CHECK(iv["foreign_only_per_review"]["denominator"] == 3);
  CHECK(iv["measured"]["reviews"] == 1);
  CHECK(iv["measured"]["foreign_only"] == 1);
  CHECK(iv["measured"]["both"] == 1);
  // Terminations of counted debates only: R1 converged, R2 cap_reached (R4 is measured, R3
  // parallel, R7 excluded).
  CHECK(r["debates"]["count"] == 2);
  CHECK(r["converged"] == 1);
  CHECK(r["cap_reached"] == 1);
  CHECK(r["no_movement"] == 0);
  CHECK(r["debates"]["rates"]["converged"]["value"].get<double>() == Approx(0.5));
  CHECK(r["debates"]["rates"]["converged"]["of"] == "counted debates");
  CHECK(r["debates"]["rates"]["no_movement"]["value"].get<double>() == Approx(0.0));
  // Rounds to convergence: R1's final revision had 4 rounds (not its 6 in all).
  CHECK(r["debates"]["rounds_to_convergence"]["values"] == json::array({4}));
  CHECK(r["debates"]["rounds_to_convergence"]["mean"].get<double>() == Approx(4.0));
  // Rubber stamps: R1 has 3 challenger rounds (2 stamps), R2 1 (none): 2 of 4.
  CHECK(r["rubber_stamp"]["numerator"] == 2);
  CHECK(r["rubber_stamp"]["denominator"] == 4);
  CHECK(r["rubber_stamp"]["value"].get<double>() == Approx(0.5));
  // Reviewer reliability: chal ran 8 rounds (R1 3, R2 1, R3 1, R4 1, R6 1, R7 1), 2 malformed
  // answers, 2 gate-absent rounds (R6, R7); of its 9 dispatches 6 exited clean, 2 of those
  // answered garbage → 4 clean.
  json chal, prim;
  for (const auto& p : r["reviewers"]) {
    if (p["profile"] == "chal") chal = p;
    if (p["profile"] == "prim") prim = p;
  }
  CHECK(chal["rounds"] == 8);
  CHECK(chal["malformed"] == 2);
  CHECK(chal["gate_absent"] == 2);
  CHECK(chal["timeouts"] == 1);
  CHECK(chal["clean"] == 4);
  CHECK(chal["clean_rate"]["value"].get<double>() == Approx(4.0 / 9.0));
  CHECK(chal["gate_absent_rate"]["denominator"] == 8);
  CHECK(prim["rounds"] == 7);
  CHECK(prim["gate_absent"] == 0);
  CHECK(prim["clean_rate"]["value"].is_null());  // no dispatch figures: no rate, not 0
  // Cost: 1.61 in all, 1.55 for the counted reviews, .3875 each on average.
  CHECK(r["cost_usd"]["total"].get<double>() == Approx(1.61));
  CHECK(r["cost_usd"]["counted"].get<double>() == Approx(1.55));
  CHECK(r["cost_usd"]["mean_per_counted_review"].get<double>() == Approx(0.3875));
  // Per review: the figures of each, and why one is left out.
  const json& pr = r["per_review"];
  REQUIRE(pr.size() == 7);
  CHECK(pr[0]["rounds_to_convergence"] == 4);
  CHECK(pr[0]["foreign_only"] == 1);
  CHECK(pr[0]["rubber_stamp_rounds"] == 2);
  CHECK(pr[0]["cost_usd"].get<double>() == Approx(0.35));
  CHECK(pr[4]["counted"] == false);
  CHECK_THAT(pr[4]["excluded_because"].get<std::string>(), Catch::Contains("mechanical"));
  CHECK_THAT(pr[6]["excluded_because"].get<std::string>(), Catch::Contains("gate-absent"));
}

TEST_CASE("report: with nothing to count every rate is null, never a made-up 0",
          "[review][report]") {
  const json r = ReviewFigures({}, {});
  CHECK(r["reviews"] == 0);
  CHECK(r["rubber_stamp"]["value"].is_null());
  CHECK(r["debates"]["rates"]["converged"]["value"].is_null());
  CHECK(r["cost_usd"]["mean_per_counted_review"].is_null());
}

}  // namespace
}  // namespace conclave::domain
