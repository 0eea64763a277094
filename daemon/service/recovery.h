// Recovery: at startup, what a previous run of the daemon left behind. Workers of dispatches
// still running are found by pid + /proc start time (a recycled pid is never signalled; a pid
// not yet in the store is taken from the spawn journal, exec/spawn_journal) and
// their process groups stopped; those dispatches become interrupted (operational, never
// counted) and are re-queued; terminals left busy are freed; a terminal whose profile is gone
// is offline until it comes back. Loop thread only; runs before the server accepts calls.
#pragma once

#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/terminal_service.h"

namespace conclave::service {

class Recovery {
 public:
  Recovery(Core& core, DispatchScheduler& scheduler, TerminalService& terminals)
      : core_(core), scheduler_(scheduler), terminals_(terminals) {}

  void Run();

 private:
  void StopSurvivors(const std::vector<domain::Dispatch>& running);
  void Requeue(domain::Dispatch d);
  void ReconcileTerminals();

  Core& core_;
  DispatchScheduler& scheduler_;
  TerminalService& terminals_;
};

}  // namespace conclave::service
