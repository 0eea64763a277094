// ReviewRounds: the engine of a review. Each reviewer round is a real task dispatched to a
// terminal of the reviewer's profile; when its dispatch finishes the round's findings are read
// (structured output, else a fenced json block; malformed output is retried once) and the
// review advances: parallel lines wait for each other; a debate alternates the same-source
// primary and foreign challengers until the domain rules say converged / no_movement /
// cap_reached. The verdict is fail-closed (domain/reconcile.h): a crashed, timed-out or
// missing reviewer is gate-absent, never APPROVED. A stalemate opens a decision gate.
// Loop thread only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "domain/review_record.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/gate_service.h"
#include "service/ports.h"
#include "service/terminal_service.h"
#include "store/review_store.h"

namespace conclave::service {

// Told when a review reached its verdict (after the commit).
class ReviewFinished {
 public:
  virtual ~ReviewFinished() = default;
  virtual void OnReviewFinished(int64_t review_id) = 0;
};

class ReviewRounds : public DispatchListener {
 public:
  ReviewRounds(Core& core, store::ReviewStore& store, DispatchScheduler& scheduler,
               TerminalService& terminals, GateService& gates)
      : core_(core), store_(store), scheduler_(scheduler), terminals_(terminals), gates_(gates) {}
  void Connect(ReviewFinished* finished) { finished_ = finished; }

  // Inside a write: starts round `round` of r (a task), queued for dispatch after the commit.
  Status Launch(domain::Review& r, int round, const std::string& role, const std::string& profile,
                const std::string& family, int retry, std::vector<int64_t>* to_dispatch);
  // Inside a write: launches the first round(s) of r's current revision from its plan.
  Status LaunchFirst(domain::Review& r, std::vector<int64_t>* to_dispatch);
  // After the commit: dispatches the round tasks.
  void DispatchRounds(const std::vector<int64_t>& task_ids);
  // Inside a write: records the verdict, tells the coordinator, opens a gate on a stalemate.
  void Finalize(domain::Review& r, const std::string& verdict, const std::string& termination,
                const std::string& reason, const nlohmann::json& findings, bool escalate);

  void OnDispatchFinished(const domain::Dispatch& d) override;
  // Startup: advance reviews whose round tasks finished while the daemon was down.
  void Resume();

 private:
  void RoundRefused(int64_t task_id, const Status& why);
  void CheckRound(domain::ReviewRound round);
  Status ReadRound(domain::Review& r, domain::ReviewRound& round, const domain::Task& task,
                   std::vector<int64_t>* to_dispatch, bool* retried);
  Status Advance(domain::Review& r, std::vector<int64_t>* to_dispatch);
  Status AdvanceDebate(domain::Review& r, const std::vector<domain::ReviewRound>& rounds,
                       bool foreign_done, std::vector<int64_t>* to_dispatch);
  void FinalizeNoForeign(domain::Review& r);
  bool FinalizeIfFailed(domain::Review& r, const std::vector<domain::ReviewRound>& rounds);

  Core& core_;
  store::ReviewStore& store_;
  DispatchScheduler& scheduler_;
  TerminalService& terminals_;
  GateService& gates_;
  ReviewFinished* finished_ = nullptr;
};

}  // namespace conclave::service
