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
  // A person's decision reopens a flow that stopped for one: another round, a sign-off, or
  // cancel.
  if (from == S::kNeedsHuman) {
    return to == S::kImplement || to == S::kReady || to == S::kCancelled;
  }
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

namespace {

// "./src//a/" → "src/a"; "." and "*" name the whole repository ("").
std::optional<std::string> NormalScope(std::string p) {
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  std::string out;
  for (char c : p) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  while (!out.empty() && out.back() == '/') out.pop_back();
  if (out == "." || out == "*") return std::string();
  if (out.empty() || out == "-") return std::nullopt;
  return out;
}

void AddScopes(std::string_view text, std::vector<std::string>& out) {
  std::string word;
  auto flush = [&] {
    if (auto n = NormalScope(word)) out.push_back(*n);
    word.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ' ' || c == '\t' || c == '`') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
}

bool Within(const std::string& path, const std::string& dir) {
  if (dir.empty() || path == dir) return true;  // "" is the whole repository
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

}  // namespace

std::vector<std::string> FlowScopes(const std::string& brief) {
  std::vector<std::string> out;
  bool in_scope = false;
  size_t at = 0;
  while (at <= brief.size()) {
    size_t end = brief.find('\n', at);
    if (end == std::string::npos) end = brief.size();
    std::string_view line(brief.data() + at, end - at);
    at = end + 1;
    size_t lead = line.find_first_not_of(" \t");
    std::string_view body = lead == std::string_view::npos ? "" : line.substr(lead);
    if (body.rfind("SCOPE:", 0) == 0) {
      in_scope = true;
      AddScopes(body.substr(6), out);
    } else if (in_scope && body.rfind("- ", 0) == 0) {
      AddScopes(body.substr(2), out);
    } else {
      in_scope = false;
    }
    if (end == brief.size()) break;
  }
  return out;
}

bool ScopesOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& x : a) {
    for (const auto& y : b) {
      if (Within(x, y) || Within(y, x)) return true;
    }
  }
  return false;
}

int64_t FlowOfTerminal(const std::string& handle) {
  if (handle.rfind("flow-", 0) != 0) return 0;
  size_t dash = handle.find('-', 5);
  if (dash == std::string::npos || dash == 5) return 0;
  std::string_view rest(handle.c_str() + dash + 1);
  // flow-<id>-writer-<profile>: the writer it swapped to (operational trouble, same family).
  if (rest != "writer" && rest != "verify" && rest.rfind("writer-", 0) != 0) return 0;
  int64_t id = 0;
  for (size_t i = 5; i < dash; ++i) {
    if (handle[i] < '0' || handle[i] > '9' || id > 1'000'000'000'000) return 0;
    id = id * 10 + (handle[i] - '0');
  }
  return id;
}

bool IsFlowTask(int64_t flow_id, const std::string& idem_key) {
  return flow_id > 0 && idem_key.rfind("flow:" + std::to_string(flow_id) + ":", 0) == 0;
}

}  // namespace conclave::domain
