// TaskService: terminals, the task DAG, dispatch of briefs to worker processes, their
// supervision, the failure policy, decision gates and crash recovery.
// Loop thread only. Every state change happens inside a CommitBatcher write; processes are
// spawned only after the row that says "running" has committed, so a crash can never leave a
// worker the store does not know about.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/worker_run.h"
#include "service/core.h"
#include "service/messaging_service.h"

namespace conclave::service {

struct CreateTaskInput {
  store::TaskRecord task;
  std::vector<int64_t> deps;
};

struct CreateTaskResult {
  store::TaskRecord task;
  bool existing = false;
};

struct TaskUpdateInput {
  int64_t id = 0;
  std::optional<std::string> title, brief, hypothesis, scope, validation;
  std::optional<int> auto_retry;
  std::optional<double> budget_usd;
};

struct DispatchInput {
  int64_t task_id = 0;
  std::string to;
  int timeout_s = 0;
  std::string from;
  double budget_usd = 0;
  int64_t review_round = 0;  // set by the review service
  std::string extra_brief;   // appended to the rendered brief (review service)
  bool reviewer = false;     // append the profile's review_args
};

struct TaskDetailResult {
  store::TaskRecord task;
  std::vector<store::DispatchRecord> dispatches;
  std::vector<domain::MessageRecord> events;
  std::vector<store::GateRecord> gates;
};

struct TranscriptResult {
  int64_t dispatch_id = 0;
  std::string data;
  int64_t next_cursor = 0;
  bool eof = false;
};

class TaskService {
 public:
  TaskService(Core& core, MessagingService& messaging);
  ~TaskService();

  // Startup: stop survivors of a previous run, mark their dispatches interrupted, re-queue.
  void Recover();
  // Shutdown: stop every running worker (their dispatches become interrupted and re-queued).
  void StopAll(std::function<void()> done);

  // Terminals.
  void CreateTerminal(const std::string& profile, const std::string& handle,
                      const std::string& cwd, Done<store::TerminalRecord> done);
  std::vector<store::TerminalRecord> ListTerminals(bool include_closed);
  StatusOr<store::TerminalRecord> GetTerminal(const std::string& handle);
  void CloseTerminal(const std::string& handle, bool force, Done<store::TerminalRecord> done);
  StatusOr<TranscriptResult> ReadTranscript(const std::string& handle, int64_t dispatch_id,
                                            int64_t cursor, int max_bytes);

  // Tasks.
  void CreateTask(CreateTaskInput in, Done<CreateTaskResult> done);
  std::vector<store::TaskRecord> ListTasks(const std::string& status, int limit);
  StatusOr<TaskDetailResult> GetTask(int64_t id);
  void UpdateTask(const TaskUpdateInput& in, Done<store::TaskRecord> done);
  void CancelTask(int64_t id, const std::string& reason, Done<store::TaskRecord> done);
  void Dispatch(const DispatchInput& in, Done<store::DispatchRecord> done);

  // Decision gates.
  void CreateGate(int64_t task_id, const std::string& question,
                  const std::vector<std::string>& options, int64_t review_id,
                  Done<store::GateRecord> done);
  void ResolveGate(int64_t id, const std::string& decision, Done<store::GateRecord> done);
  std::vector<store::GateRecord> ListGates(bool open_only, int64_t task_id);

  // Hook for services layered on top (reviews): called after a dispatch finished and its
  // effects committed.
  std::function<void(const store::DispatchRecord&)> on_dispatch_finished;

  // Cooldowns currently in force (profile → until ms, reason).
  std::vector<std::tuple<std::string, int64_t, std::string>> Cooldowns();
  double TaskSpent(int64_t task_id) { return core_.dispatches.TaskSpend(task_id); }
  int RunningCount() const { return static_cast<int>(runs_.size()); }

 private:
  struct ActiveRun {
    std::shared_ptr<exec::WorkerRun> run;
    int64_t last_heartbeat_ms = 0;
    double running_cost = 0;
    std::string stdout_line;  // partial line carried between chunks (cost probe)
  };

  // Scheduling.
  std::vector<int64_t> PumpLocked();  // inside a write; returns dispatch ids to spawn
  void Pump();                        // its own write, then spawns
  void SpawnAfterCommit(const std::vector<int64_t>& ids);
  void Spawn(int64_t dispatch_id);
  void ScheduleWake(int64_t at_ms);
  std::vector<store::TerminalRecord> Candidates(const store::DispatchRecord& d);
  // Every open terminal ("@idle" queues for whichever frees up first).
  StatusOr<std::vector<std::string>> ResolveAnyTerminal();
  bool CoolingDown(const std::string& profile, int64_t now, int64_t* until);

  // Completion.
  void OnRunFinished(int64_t dispatch_id, const exec::RunOutcome& outcome);
  void FinishDispatch(store::DispatchRecord& d, store::TaskRecord& t);
  void SetTaskStatus(store::TaskRecord& t, const std::string& status);
  void ReleaseDependants(int64_t task_id);
  int64_t Requeue(const store::DispatchRecord& d, const std::string& target, int64_t not_before,
                  bool count_op_retry);
  void EmitToCoordinator(const std::string& coordinator, const std::string& type,
                         const std::string& priority, int64_t task_id, int64_t dispatch_id,
                         const std::string& subject, const std::string& body,
                         const std::string& payload);
  Status CheckBudgets(const store::TaskRecord& t, const std::string& family, double per_dispatch);
  Status ValidateWorkerReport(domain::MessageRecord& m, const std::string& token);
  std::vector<Core::Liveness> Liveness(const std::vector<int64_t>& task_ids);
  void OnStdout(int64_t dispatch_id, std::string_view chunk);
  std::string DispatchDir(int64_t id) const;
  std::string RenderBrief(const store::TaskRecord& t, const exec::Profile& p,
                          const store::DispatchRecord& d);

  Core& core_;
  MessagingService& messaging_;
  std::map<int64_t, ActiveRun> runs_;
  std::map<int64_t, DispatchInput> dispatch_extras_;  // review briefs, keyed by dispatch id
  boost::asio::steady_timer wake_timer_;
  int64_t wake_at_ms_ = 0;
  bool stopping_ = false;
};

}  // namespace conclave::service
