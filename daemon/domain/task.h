// Task: a unit of work with a brief, a DAG of dependencies, an idempotency key and a status
// (DESIGN §1). TaskState is the task's lifecycle; its names are the strings stored in the
// database and shown to users — never rename one. Every status change in the daemon goes
// through SetTaskStatus, which refuses an illegal move and keeps a decision gate's hold:
// while a gate blocks the task, an outcome lands in resume_status instead.
// Pure: no I/O, no clock (callers pass the time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace conclave::domain {

enum class TaskState { kPending, kReady, kDispatched, kCompleted, kFailed, kBlocked, kCancelled };

std::string_view TaskStateName(TaskState s);
std::optional<TaskState> ParseTaskState(std::string_view name);
// Every state, in lifecycle order (the one list api/ and the client use).
const std::vector<TaskState>& AllTaskStates();

// Whether from → to is a legal move (staying in the same state always is).
bool TaskTransitionAllowed(TaskState from, TaskState to);

struct Task {
  int64_t id = 0;
  std::string title;
  std::string brief;
  TaskState status = TaskState::kReady;
  std::string role = "writer";
  std::string hypothesis, scope, validation;
  std::string idem_key;
  std::string blocked_reason;
  std::optional<TaskState> resume_status;  // where a gate-held task goes when the gate resolves
  std::string result;                      // JSON
  int64_t created_ms = 0, updated_ms = 0;
  int auto_retry = 0, auto_retries_used = 0;
  std::string coordinator = "coordinator";
  std::string session;
  double budget_usd = 0;
  int unmet_deps = 0;
  int breaker_count = 0;
  std::string breaker_fp;
  std::string last_target;

  // Held by an open decision gate (blocked_reason "gate:<id>").
  bool HeldByGate() const;
  bool Finished() const { return status == TaskState::kCompleted || status == TaskState::kCancelled; }
};

// Moves t to `to` (with `reason` as blocked_reason when to is kBlocked; cleared otherwise).
// A task held by a gate keeps its hold: any outcome but cancellation is recorded in
// resume_status and applied when the gate resolves. Refuses illegal moves with
// FAILED_PRECONDITION naming both states; t is unchanged then.
Status SetTaskStatus(Task& t, TaskState to, int64_t now_ms, std::string reason = "");

// Places a gate's hold on t (blocked, "gate:<id>"), remembering where to resume; a task
// already held keeps its first gate and resume state.
Status HoldTaskForGate(Task& t, int64_t gate_id, int64_t now_ms);

// Releases a gate's hold when no gate remains open: the task resumes (ready when nothing was
// recorded). next_open_gate > 0 keeps it held by that gate instead.
Status ReleaseTaskFromGate(Task& t, int64_t next_open_gate, int64_t now_ms);

}  // namespace conclave::domain
