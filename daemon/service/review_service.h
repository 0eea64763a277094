// ReviewService: cross-family adversarial review as the API sees it — start (idempotent by
// key; a Strong review needs a real session and the Strong-per-session guard is an atomic
// claim; a review may name a repository and commit, resolved off the loop), show, list, wait
// for a verdict (a long-poll answered when the verdict commits), re-gate a new revision (no
// re-rolls: an identical artifact is refused unless retrying a gate-absent verdict; open
// foreign findings are carried; past max_fix_rounds a re-gate escalates instead), and the
// Phase-0 report. The rounds themselves run in ReviewRounds. Loop thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "domain/review_policy.h"
#include "domain/review_record.h"
#include "service/core.h"
#include "service/review_report.h"
#include "service/review_rounds.h"
#include "service/review_verdicts.h"
#include "service/review_workspace.h"
#include "service/waiter_table.h"
#include "service/write_then.h"
#include "store/review_store.h"

namespace conclave::service {

struct StartReviewInput {
  std::string artifact, artifact_kind = "diff", writer_family, mode;
  std::string primary;
  std::vector<std::string> challengers;
  int cap = -1;  // -1 = config default
  double budget_usd = 0;
  std::string session, idem_key, coordinator;
  std::optional<int> max_fix_rounds;  // nullopt = review.max_fix_rounds
  std::string repo, commit;           // the reviewed repository and commit ("" = none)
  bool measure = false;
};

struct RegateInput {
  std::string artifact;
  bool retry_absent = false;  // the same artifact again, after a gate-absent verdict
  std::optional<int> max_fix_rounds;
};

struct ReviewView {
  domain::Review review;
  std::vector<domain::ReviewRound> rounds;
  std::vector<domain::Signoff> signoffs;
  double cost_usd = 0;
};

class ReviewService : public ReviewFinished {
 public:
  ReviewService(Core& core, store::ReviewStore& store, ReviewRounds& rounds,
                ReviewVerdicts& verdicts, ReviewWorkspace& workspace)
      : core_(core), store_(store), rounds_(rounds), verdicts_(verdicts), workspace_(workspace),
        waiters_(core.clock, [this](int64_t id) { return Get(id); }) {}

  void Start(StartReviewInput in, Done<ReviewView> done);
  StatusOr<ReviewView> Get(int64_t id);
  std::vector<ReviewView> List(int limit);
  void Wait(int64_t id, int64_t timeout_ms, Done<ReviewView> done);
  void Regate(int64_t id, RegateInput in, Done<ReviewView> done);
  // The report since since_ms — every profile's reliability, the review figures and the
  // flows' (json["flows"]) — built off the loop (core.snapshots) in one read of the store: it
  // walks every dispatch, review and flow since then.
  void Report(int64_t since_ms, Done<ReportView> done);

  // Also tells `also` (the flows) of every verdict, after the review's own waiters.
  void AlsoTell(ReviewFinished* also) { also_ = also; }
  void OnReviewFinished(int64_t review_id) override {
    WakeWaiters(review_id);
    if (also_) also_->OnReviewFinished(review_id);
  }
  // Shutdown: answer every pending review wait now (with the review as it stands).
  void ExpireWaiters() { waiters_.ExpireAll(); }
  size_t waiter_count() const { return waiters_.count(); }

 private:

  // The part of Start after the commit was resolved.
  void StartResolved(StartReviewInput in, Done<ReviewView> done);
  Status Validate(StartReviewInput& in, domain::ReviewMode* mode);
  StatusOr<domain::ReviewPlan> Plan(const StartReviewInput& in, domain::ReviewMode mode, int cap);
  domain::ReviewerCandidate Candidate(const exec::Profile& p) const;
  Status Begin(domain::Review& r, domain::ReviewMode mode, const domain::ReviewPlan& plan,
               std::vector<int64_t>* to_dispatch);
  // Inside Regate's write: refuses a re-roll, counts a fix round (false: escalated instead).
  Status CheckRegate(domain::Review& r, const RegateInput& in, const std::string& sha,
                     bool* escalated);
  void AnswerAfterCommit(int64_t id, const std::string& what, Done<ReviewView> done);
  ReviewView View(const domain::Review& r);
  void WakeWaiters(int64_t id) { waiters_.Wake(id); }

  Core& core_;
  store::ReviewStore& store_;
  ReviewRounds& rounds_;
  ReviewVerdicts& verdicts_;
  ReviewWorkspace& workspace_;
  ReviewFinished* also_ = nullptr;
  WaiterTable<ReviewView> waiters_;
};

}  // namespace conclave::service
