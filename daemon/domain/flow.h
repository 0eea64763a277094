// Flow: the daemon-driven loop of one change — a git worktree on its own branch, the brief
// implemented by a writer, the verify commands, a cross-family review, then ready (or a
// person's decision). FlowStep is the recorded state; its names are stored and shown to users
// — never rename one. Every step change goes through MoveFlow, which refuses an illegal move.
// Pure: no I/O, no clock (callers pass the time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace conclave::domain {

enum class FlowStep { kWorktree, kImplement, kVerify, kReview, kReady, kNeedsHuman, kFailed, kCancelled };

std::string_view FlowStepName(FlowStep s);
std::optional<FlowStep> ParseFlowStep(std::string_view name);
// ready, needs_human, failed and cancelled end a flow.
bool FlowStepTerminal(FlowStep s);
// Whether from → to is a legal move (staying is always legal).
bool FlowTransitionAllowed(FlowStep from, FlowStep to);
// The statuses a flow can have: running, then the terminal steps.
const std::vector<std::string>& FlowStatuses();

struct Flow {
  int64_t id = 0;
  std::string idem_key, title, brief, repo, base, base_sha, head_sha, branch, worktree;
  std::string writer, writer_family;
  std::string verify = "[]";  // JSON array of commands
  std::string review_mode = "ordinary";
  std::string reviewers = "[]";  // JSON array of profiles
  int cap = -1, max_fix_rounds = 2;
  std::string ship = "none";
  std::string status = "running";
  FlowStep step = FlowStep::kWorktree;
  int round = 1, fix_rounds = 0;
  int64_t task_id = 0;
  int verify_index = 0;
  int64_t review_id = 0;
  int review_round = 0;
  std::string fix_brief, coordinator = "coordinator", last_error, note;
  std::string history = "[]";
  bool cleaned = false;
  int64_t created_ms = 0, updated_ms = 0;
  double budget_usd = 0;  // what its dispatches may spend in all (0 = no cap)
};

// Moves f to `to` (status follows: running, or the terminal step's name), appends the move to
// its history with `note`, and clears the step's task. Refuses an illegal move with
// FAILED_PRECONDITION naming both steps; f is unchanged then.
Status MoveFlow(Flow& f, FlowStep to, int64_t now_ms, const std::string& note);

// The deterministic idempotency key of a step's task: one per flow, round and step, so a
// restarted daemon finds the task it made instead of making another.
std::string FlowTaskKey(int64_t flow_id, int round, const std::string& what);

// The paths a brief declares it will touch: a "SCOPE:" line (comma- or space-separated) and
// the "- path" lines right under it, normalised ("./src//a/" → "src/a"). Empty when the brief
// declares none.
std::vector<std::string> FlowScopes(const std::string& brief);
// Whether two declared scopes may touch the same file: a path equal to, inside or around one
// of the other's. A flow that declares no scope overlaps nothing.
bool ScopesOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b);

// The flow that owns a terminal handle ("flow-<id>-writer", "flow-<id>-writer-<profile>" after
// a writer swap, "flow-<id>-verify"), 0 for none.
int64_t FlowOfTerminal(const std::string& handle);
// Whether a task (by its idempotency key, FlowTaskKey) is one of that flow's steps.
bool IsFlowTask(int64_t flow_id, const std::string& idem_key);

}  // namespace conclave::domain
