#include "domain/task.h"

#include <array>

namespace conclave::domain {
namespace {

constexpr std::array<std::string_view, 7> kNames = {
    "pending", "ready", "dispatched", "completed", "failed", "blocked", "cancelled"};

}  // namespace

std::string_view TaskStateName(TaskState s) { return kNames[static_cast<size_t>(s)]; }

std::optional<TaskState> ParseTaskState(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<TaskState>(i);
  }
  return std::nullopt;
}

const std::vector<TaskState>& AllTaskStates() {
  static const std::vector<TaskState> all = {
      TaskState::kPending,   TaskState::kReady,   TaskState::kDispatched, TaskState::kCompleted,
      TaskState::kFailed,    TaskState::kBlocked, TaskState::kCancelled};
  return all;
}

bool TaskTransitionAllowed(TaskState from, TaskState to) {
  using S = TaskState;
  if (from == to) return true;
  switch (from) {
    case S::kPending:
      return to == S::kReady || to == S::kBlocked || to == S::kCancelled;
    case S::kReady:
      return to == S::kDispatched || to == S::kBlocked || to == S::kCancelled;
    case S::kDispatched:
      return to == S::kCompleted || to == S::kFailed || to == S::kReady || to == S::kBlocked ||
             to == S::kCancelled;
    case S::kFailed:
      // A failed task may be dispatched again, held by a gate or cancelled.
      return to == S::kDispatched || to == S::kReady || to == S::kBlocked || to == S::kCancelled;
    case S::kBlocked:
      // Leaving a block returns the task to wherever its outcome left it.
      return to != S::kBlocked;
    case S::kCompleted:
    case S::kCancelled:
      return false;
  }
  return false;
}

bool Task::HeldByGate() const {
  return status == TaskState::kBlocked && blocked_reason.rfind("gate:", 0) == 0;
}

Status SetTaskStatus(Task& t, TaskState to, int64_t now_ms, std::string reason) {
  if (t.HeldByGate() && to != TaskState::kCancelled && to != TaskState::kBlocked) {
    // The gate keeps holding the task; the outcome waits for its resolution.
    t.resume_status = to;
    t.updated_ms = now_ms;
    return Status::Ok();
  }
  if (!TaskTransitionAllowed(t.status, to)) {
    return FailedPrecondition("task " + std::to_string(t.id) + ": cannot move from " +
                              std::string(TaskStateName(t.status)) + " to " +
                              std::string(TaskStateName(to)));
  }
  t.status = to;
  // blocked, failed and cancelled say why; every other state clears the reason.
  bool says_why = to == TaskState::kBlocked || to == TaskState::kFailed || to == TaskState::kCancelled;
  t.blocked_reason = says_why ? std::move(reason) : std::string();
  t.updated_ms = now_ms;
  return Status::Ok();
}

Status HoldTaskForGate(Task& t, int64_t gate_id, int64_t now_ms) {
  if (t.HeldByGate()) return Status::Ok();
  if (t.Finished()) {
    return FailedPrecondition("task: task " + std::to_string(t.id) + " is already " +
                              std::string(TaskStateName(t.status)));
  }
  t.resume_status = t.status;
  t.status = TaskState::kBlocked;
  t.blocked_reason = "gate:" + std::to_string(gate_id);
  t.updated_ms = now_ms;
  return Status::Ok();
}

Status ReleaseTaskFromGate(Task& t, int64_t next_open_gate, int64_t now_ms) {
  if (!t.HeldByGate()) return Status::Ok();
  if (next_open_gate > 0) {
    t.blocked_reason = "gate:" + std::to_string(next_open_gate);
  } else {
    t.status = t.resume_status.value_or(TaskState::kReady);
    t.resume_status.reset();
    t.blocked_reason.clear();
  }
  t.updated_ms = now_ms;
  return Status::Ok();
}

}  // namespace conclave::domain
