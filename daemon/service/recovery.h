// Recovery: at startup, what a previous run of the daemon left behind. Workers of dispatches
// still running are found by pid + /proc start time (a recycled pid is never signalled; a pid
// not yet in the store is taken from the spawn journal, exec/spawn_journal) and
// their process groups stopped; those dispatches become interrupted (operational, never
// counted) and are re-queued; terminals left busy are freed; a terminal whose profile is gone
// is offline until it comes back. A worker whose pid reached neither the store nor the journal
// is found by its environment (this daemon's socket and its dispatch id). A dispatch during
// which the daemon died uncleanly 3 times soon after its start fails as crash_loop with an
// escalation instead (domain/crash_loop). Loop thread only; runs before the server accepts
// calls.
#pragma once

#include "exec/proc_info.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/task_service.h"
#include "service/terminal_service.h"

namespace conclave::service {

class Recovery {
 public:
  Recovery(Core& core, DispatchScheduler& scheduler, TerminalService& terminals,
           TaskService& tasks)
      : core_(core), scheduler_(scheduler), terminals_(terminals), tasks_(tasks) {}

  void Run();

 private:
  void StopSurvivors(const std::vector<domain::Dispatch>& running);
  // Processes an earlier run of this daemon started for this store's dispatches (their
  // environment's dispatch id and token check out), with their descendants.
  std::vector<exec::ProcStat> FindLeftovers();
  // Ends the interrupted dispatches (re-queued, or failed as a crash loop) and frees their
  // terminals in one write; a write that cannot land (a full disk) runs again once one can.
  void Settle(std::vector<domain::Dispatch> running);
  void Requeue(domain::Dispatch d);
  void FailCrashLoop(domain::Dispatch d);
  void FreeTerminal(const domain::Dispatch& d);
  void ReconcileTerminals();

  Core& core_;
  DispatchScheduler& scheduler_;
  TerminalService& terminals_;
  TaskService& tasks_;
};

}  // namespace conclave::service
