#include "domain/flow.h"

#include <array>
#include <nlohmann/json.hpp>

namespace conclave::domain {
namespace {
constexpr std::array<std::string_view, 8> kNames = {
    "worktree", "implement", "verify", "review", "ready", "needs_human", "failed", "cancelled"};
}  // namespace

std::string_view FlowStepName(FlowStep s) { return kNames[static_cast<size_t>(s)]; }

std::optional<FlowStep> ParseFlowStep(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<FlowStep>(i);
  }
  return std::nullopt;
}

bool FlowStepTerminal(FlowStep s) {
  return s == FlowStep::kReady || s == FlowStep::kNeedsHuman || s == FlowStep::kFailed ||
         s == FlowStep::kCancelled;
}

const std::vector<std::string>& FlowStatuses() {
  static const std::vector<std::string> all = {"running", "ready", "needs_human", "failed",
                                               "cancelled"};
  return all;
}

bool FlowTransitionAllowed(FlowStep from, FlowStep to) {
  using S = FlowStep;
  if (from == to) return true;
  if (FlowStepTerminal(from)) return false;
  // Any running step may fail, be cancelled or stop for a person.
  if (to == S::kFailed || to == S::kCancelled || to == S::kNeedsHuman) return true;
  switch (from) {
    case S::kWorktree:
      return to == S::kImplement;
    case S::kImplement:
      return to == S::kVerify || to == S::kReview;  // no verify commands: straight to review
    case S::kVerify:
      return to == S::kReview || to == S::kImplement;  // a failing command: a fix round
    case S::kReview:
      return to == S::kReady || to == S::kImplement;  // findings: a fix round
    default:
      return false;
  }
}

Status MoveFlow(Flow& f, FlowStep to, int64_t now_ms, const std::string& note) {
  if (!FlowTransitionAllowed(f.step, to)) {
    return FailedPrecondition("flow " + std::to_string(f.id) + ": cannot move from " +
                              std::string(FlowStepName(f.step)) + " to " +
                              std::string(FlowStepName(to)));
  }
  f.step = to;
  f.status = FlowStepTerminal(to) ? std::string(FlowStepName(to)) : "running";
  f.task_id = 0;
  f.note = note;
  f.updated_ms = now_ms;
  auto h = nlohmann::json::parse(f.history, nullptr, false);
  if (!h.is_array()) h = nlohmann::json::array();
  h.push_back({{"step", std::string(FlowStepName(to))}, {"round", f.round}, {"at_ms", now_ms},
               {"note", note}});
  f.history = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Status::Ok();
}

std::string FlowTaskKey(int64_t flow_id, int round, const std::string& what) {
  return "flow:" + std::to_string(flow_id) + ":round" + std::to_string(round) + ":" + what;
}

}  // namespace conclave::domain
