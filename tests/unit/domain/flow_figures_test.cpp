// Unit tests: the report's per-flow figures (domain/flow_figures) against a hand-computed set.
#include "domain/flow_figures.h"

#include <catch2/catch.hpp>

namespace conclave::domain {
namespace {

std::string History(std::vector<std::pair<std::string, int64_t>> moves) {
  nlohmann::json h = nlohmann::json::array();
  for (const auto& [step, at] : moves) h.push_back({{"step", step}, {"round", 1}, {"at_ms", at}});
  return h.dump();
}

TEST_CASE("flow figures: time per step, fix rounds, first-pass verify and cost", "[flow]") {
  FlowFacts a;  // ready first time: worktree 100 ms, implement 1 s, verify 2 s, review 3 s
  a.id = 1;
  a.status = "ready";
  a.implement_runs = 1;
  a.verify_runs = 1;
  a.cost_usd = 0.5;
  a.history = History({{"worktree", 0}, {"implement", 100}, {"verify", 1100}, {"review", 3100},
                       {"ready", 6100}});
  a.first_pass_verify = true;
  FlowFacts b;  // one fix round after a failing verify, then stuck
  b.id = 2;
  b.status = "needs_human";
  b.rounds = 2;
  b.fix_rounds = 1;
  b.implement_runs = 2;
  b.verify_runs = 2;
  b.cost_usd = 1.25;
  b.history = History({{"worktree", 0}, {"implement", 50}, {"verify", 550}, {"implement", 1550},
                       {"verify", 2050}, {"needs_human", 3050}});
  b.first_pass_verify = false;
  FlowFacts c;  // no verify commands: not in the first-pass denominator
  c.id = 3;
  c.status = "running";
  c.history = History({{"worktree", 0}, {"implement", 10}});
  auto j = FlowFigures({a, b, c});
  CHECK(j["count"] == 3);
  CHECK(j["by_status"]["ready"] == 1);
  CHECK(j["by_status"]["needs_human"] == 1);
  CHECK(j["by_status"]["running"] == 1);
  CHECK(j["fix_rounds"]["total"] == 1);
  CHECK(j["fix_rounds"]["mean"].get<double>() == Approx(1.0 / 3));
  CHECK(j["first_pass_verify"]["numerator"] == 1);
  CHECK(j["first_pass_verify"]["denominator"] == 2);
  CHECK(j["first_pass_verify"]["rate"].get<double>() == Approx(0.5));
  CHECK(j["cost_usd"].get<double>() == Approx(1.75));
  // implement: a 1000 + b (500 + 500) + c (still in it: not counted) = 2000
  CHECK(j["step_ms_total"]["implement"] == 2000);
  CHECK(j["step_ms_total"]["verify"] == 2000 + 1000 + 1000);
  CHECK(j["step_ms_total"]["review"] == 3000);
  CHECK(j["step_ms_total"]["worktree"] == 100 + 50 + 10);
  CHECK(j["per_flow"][0]["step_ms"]["review"] == 3000);
  CHECK(j["per_flow"][2]["first_pass_verify"].is_null());
  // No flows: rates without a denominator are null, not 0.
  auto none = FlowFigures({});
  CHECK(none["first_pass_verify"]["rate"].is_null());
  CHECK(none["fix_rounds"]["mean"].is_null());
}

}  // namespace
}  // namespace conclave::domain
