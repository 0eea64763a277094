// ReviewService: cross-family adversarial review. Every reviewer round is a real task
// dispatched to a worker terminal of the reviewer's profile; when its dispatch finishes the
// round's findings are parsed (structured output, else a fenced json block), and the review
// advances: parallel lines wait for each other; a debate alternates same-source primary and
// foreign challengers until the domain rules say converged / no_movement / cap_reached. The
// verdict is fail-closed (domain/reconcile.h): a crashed, timed-out or missing reviewer is
// gate-absent, never APPROVED. Loop thread only.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/core.h"
#include "service/messaging_service.h"
#include "service/task_service.h"
#include "store/review_store.h"

namespace conclave::service {

struct StartReviewInput {
  std::string artifact, artifact_kind = "diff", writer_family, mode;
  std::string primary;
  std::vector<std::string> challengers;
  int cap = -1;  // -1 = config default
  double budget_usd = 0;
  std::string session, idem_key, coordinator;
};

struct ReviewView {
  store::ReviewRecord review;
  std::vector<store::RoundRecordRow> rounds;
  double cost_usd = 0;
};

class ReviewService {
 public:
  ReviewService(Core& core, MessagingService& messaging, TaskService& tasks);

  void Start(StartReviewInput in, Done<ReviewView> done);
  StatusOr<ReviewView> Get(int64_t id);
  std::vector<ReviewView> List(int limit);
  void Wait(int64_t id, int64_t timeout_ms, Done<ReviewView> done);
  void Regate(int64_t id, std::string artifact, Done<ReviewView> done);
  nlohmann::json Report(int64_t since_ms);

  // Called by the task service after a dispatch's outcome committed.
  void OnDispatchFinished(const store::DispatchRecord& d);
  // Startup: advance reviews whose round tasks finished while the daemon was down.
  void Resume();
  // Shutdown: answer every pending review wait now (with the review as it stands).
  void ExpireWaiters();

 private:
  struct Waiter {
    Done<ReviewView> done;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  Status LaunchRound(store::ReviewRecord& r, int round, const std::string& role,
                     const std::string& profile, const std::string& family, int retry,
                     std::vector<int64_t>* to_dispatch);
  void DispatchRounds(const std::vector<int64_t>& task_ids);
  void CheckRound(store::RoundRecordRow round);
  Status Advance(store::ReviewRecord& r, std::vector<int64_t>* to_dispatch);
  void Finalize(store::ReviewRecord& r, const std::string& verdict,
                const std::string& termination, const std::string& reason,
                const nlohmann::json& findings, bool escalate);
  std::string RoundBrief(const store::ReviewRecord& r, int round, const std::string& role,
                         const std::vector<store::RoundRecordRow>& prior);
  std::string EnsureTerminal(const std::string& profile);
  ReviewView View(const store::ReviewRecord& r);
  void WakeWaiters(int64_t id);

  Core& core_;
  MessagingService& messaging_;
  TaskService& tasks_;
  store::ReviewStore store_;
  std::map<int64_t, std::vector<std::shared_ptr<Waiter>>> waiters_;
};

}  // namespace conclave::service
