// TaskService: the task DAG — create (idempotent by key), list, show, update (a re-plan closes
// the circuit breaker), cancel (stops the running worker), and the release of dependants when
// a task completes. When a task fails or is cancelled, the tasks waiting on it (transitively)
// become blocked ("dependency_failed") with an escalation instead of staying pending for ever;
// they return to pending / ready when the dependency is dispatched again and completes.
// Every status change goes through domain::SetTaskStatus. Loop thread only;
// writes run inside the commit batcher and answer after COMMIT.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/gate.h"
#include "domain/message.h"
#include "domain/task.h"
#include "service/core.h"
#include "service/ports.h"
#include "service/write_then.h"

namespace conclave::service {

struct CreateTaskInput {
  domain::Task task;
  std::vector<int64_t> deps;
};

// A task as the API shows it: the record, its dependencies and what it has spent.
struct TaskView {
  domain::Task task;
  std::vector<int64_t> deps;
  double spent_usd = 0;
};

struct CreateTaskResult {
  TaskView task;
  bool existing = false;
};

struct TaskUpdateInput {
  int64_t id = 0;
  std::optional<std::string> title, brief, hypothesis, scope, validation;
  std::optional<int> auto_retry;
  std::optional<double> budget_usd;
};

struct TaskDetailResult {
  TaskView task;
  std::vector<domain::Dispatch> dispatches;
  std::vector<domain::MessageRecord> events;
  std::vector<domain::Gate> gates;
};

class TaskService {
 public:
  explicit TaskService(Core& core) : core_(core) {}
  void Connect(RunControl* runs, RefusalLog* refusals) {
    runs_ = runs;
    refusals_ = refusals;
  }

  void Create(CreateTaskInput in, Done<CreateTaskResult> done);
  // status: "" = any (validated by the caller against domain::AllTaskStates()).
  std::vector<TaskView> List(std::optional<domain::TaskState> status, int limit);
  StatusOr<TaskDetailResult> Get(int64_t id);
  // A worker reads only its own task.
  StatusOr<TaskDetailResult> GetFor(const domain::Caller& caller, int64_t id);
  void Update(const TaskUpdateInput& in, Done<TaskView> done);
  void Cancel(int64_t id, const std::string& reason, Done<TaskView> done);

  // Inside a write: moves t through the lifecycle (gate-aware) and saves it.
  Status SetStatus(domain::Task& t, domain::TaskState to, std::string reason = "");
  // Inside a write: t completed; its dependants lose one unmet dependency each.
  void ReleaseDependants(int64_t task_id);
  // Inside a write: t failed or was cancelled; every task still waiting on it, directly or
  // through another, becomes blocked (dependency_failed), each with an escalation.
  void BlockDependants(const domain::Task& t);
  TaskView View(const domain::Task& t);

 private:
  // Whether a dependency of task_id is failed, cancelled or itself blocked by one.
  bool DependencyFailed(int64_t task_id);
  // task_id waits normally again: its dependants blocked only through it follow.
  void UnblockWaiting(int64_t task_id);

  Core& core_;
  RunControl* runs_ = nullptr;
  RefusalLog* refusals_ = nullptr;
};

}  // namespace conclave::service
