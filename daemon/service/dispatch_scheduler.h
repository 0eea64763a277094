// DispatchScheduler: accepts a dispatch (validates the task and the target, checks budgets,
// inserts a queued row) and runs the queue: in id order, each queued dispatch whose time has
// come gets an idle terminal of its target whose profile is under max_concurrent and not
// cooling down; the chosen one becomes running (with a fresh token and a deadline) and its
// worker is started by the RunStarter after the commit. A wake-up alarm re-runs the queue when
// a delay or cooldown ends. Every dispatch state change goes through domain::MoveDispatch.
// Loop thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/dispatch.h"
#include "service/budget_guard.h"
#include "service/core.h"
#include "service/messaging_service.h"
#include "service/ports.h"
#include "service/task_service.h"
#include "service/terminal_service.h"
#include "store/cooldown_store.h"

namespace conclave::service {

struct DispatchInput {
  int64_t task_id = 0;
  std::string to;
  int timeout_s = 0;
  std::string from;
  double budget_usd = 0;
  int64_t review_round = 0;  // set by the review service
};

class DispatchScheduler : public QueuePump {
 public:
  DispatchScheduler(Core& core, MessagingService& messaging, TaskService& tasks,
                    TerminalService& terminals, BudgetGuard& budgets)
      : core_(core), messaging_(messaging), tasks_(tasks), terminals_(terminals), budgets_(budgets) {}
  void Connect(RunStarter* starter) { starter_ = starter; }

  void Dispatch(const DispatchInput& in, Done<domain::Dispatch> done);
  // Its own write, then starts what it scheduled.
  void Pump() override;
  // Inside a write: runs the queue; returns the dispatch ids to start after the commit.
  // `fresh`, a dispatch not inserted yet (id 0), joins the queue last and is inserted in the
  // state the queue leaves it in: one that starts at once is written once, as running.
  std::vector<int64_t> PumpLocked(domain::Dispatch* fresh = nullptr);
  // After the current write commits, starts the given dispatches' workers.
  void StartAfterCommit(const std::vector<int64_t>& ids);
  // Inside a write: a new queued attempt of d's task on `target`, not before not_before_ms.
  int64_t Requeue(const domain::Dispatch& d, const std::string& target, int64_t not_before_ms,
                  bool count_op_retry);
  std::vector<store::CooldownRecord> Cooldowns();
  // Shutdown: schedule nothing more.
  void Stop();

 private:
  Status CheckDispatchable(const domain::Task& t);
  StatusOr<std::string> CheckTarget(const std::string& to);  // returns the family of a handle
  // A group's members, without flow terminals or terminals in a flow's worktree.
  StatusOr<std::vector<std::string>> ResolveTarget(const std::string& to);
  // A flow's terminal takes only that flow's steps; no other writer goes into a flow's worktree.
  Status CheckFlowTerminal(const domain::Task& t, const std::string& to) const;
  bool InFlowWorktree(const domain::Terminal& t) const;
  std::vector<domain::Terminal> Candidates(const domain::Dispatch& d);
  const domain::Terminal* ChooseTerminal(const std::vector<domain::Terminal>& candidates,
                                         const domain::Task& task, int64_t now, int64_t* wake_at);
  // A writer dispatch runs in cwd, and a terminal there was created --exclusive.
  bool WriterRunsIn(const std::string& cwd);
  bool DropIfNoTerminal(domain::Dispatch& d, domain::Task& task,
                        const std::vector<domain::Terminal>& candidates, int64_t now);
  Status StartRunning(domain::Dispatch& d, domain::Task& task, const domain::Terminal& term,
                      const exec::Profile& profile, int64_t now);
  void ScheduleWake(int64_t at_ms);
  // Writes d: inserted (its id set) if it has none yet, updated otherwise.
  void Save(domain::Dispatch& d);
  // Starts what it can of the queue, in order; returns the ids started.
  std::vector<int64_t> RunQueue(std::vector<domain::Dispatch>& queue);

  Core& core_;
  MessagingService& messaging_;
  TaskService& tasks_;
  TerminalService& terminals_;
  BudgetGuard& budgets_;
  RunStarter* starter_ = nullptr;
  std::map<int64_t, std::string> fresh_tokens_;  // dispatch id → plaintext token, until launch
  std::shared_ptr<Alarm> wake_;
  int64_t wake_at_ms_ = 0;
  bool stopping_ = false;
};

}  // namespace conclave::service
