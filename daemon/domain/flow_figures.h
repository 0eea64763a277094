// FlowFigures: `conclave report`'s per-flow figures (issue 14 item 5) — rounds, fix rounds,
// implement and verify runs, time per step (from the flow's recorded history: the time from
// entering a step to the next move), cost, and the first-pass verify rate (flows whose first
// round's verify commands all passed, of the flows that ran verify). Every rate names its
// denominator. Pure.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace conclave::domain {

struct FlowFacts {
  int64_t id = 0;
  std::string status;  // running | ready | needs_human | failed | cancelled
  int rounds = 1, fix_rounds = 0, implement_runs = 0, verify_runs = 0;
  double cost_usd = 0;
  std::string history = "[]";  // Flow::history: [{step, round, at_ms, note}] in order
  // Whether every verify command of round 1 passed; nullopt when round 1 ran no verify.
  std::optional<bool> first_pass_verify;
};

nlohmann::json FlowFigures(const std::vector<FlowFacts>& flows);

}  // namespace conclave::domain
