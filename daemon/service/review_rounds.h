// ReviewRounds: the engine of a review. Each reviewer round is a real task dispatched to a
// terminal of the reviewer's profile, started by the RoundLauncher (its own directory, a
// deadline of min(profile timeout_s, review.round_timeout_s), a brief of structured parts,
// the reviewer's family checked at dispatch). When its dispatch finishes the round's findings
// are read (structured output, else a fenced json block; malformed output is retried once),
// their ids namespaced by the daemon (domain/finding_ids.h), and the review advances: parallel
// lines (and --measure reviews) wait for each other; a debate alternates the same-source
// primary and foreign challengers until the domain rules say converged / no_movement /
// cap_reached. Open foreign findings carried from an earlier revision stay open until their
// own family answers withdraw or fixed (domain/carry_over.h). The verdict is fail-closed
// (domain/reconcile.h, ReviewVerdicts): a refused, crashed, timed-out or missing reviewer is
// gate-absent, never APPROVED. Loop thread only.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "domain/reconcile.h"
#include "domain/review_record.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/ports.h"
#include "service/review_round_launcher.h"
#include "service/review_verdicts.h"
#include "store/review_store.h"

namespace conclave::service {

class ReviewRounds : public DispatchListener {
 public:
  ReviewRounds(Core& core, store::ReviewStore& store, RoundLauncher& launcher,
               ReviewVerdicts& verdicts)
      : core_(core), store_(store), launcher_(launcher), verdicts_(verdicts) {
    launcher_.on_refused = [this](int64_t task_id, const Status& why) { RoundRefused(task_id, why); };
  }

  // Inside a write: launches the first round(s) of r's current revision from its plan; a
  // reviewer refused at launch ends the revision gate-absent at once.
  Status LaunchFirst(domain::Review& r, std::vector<int64_t>* to_dispatch);
  // After the commit: prepares each round's directory (off the loop), then dispatches it.
  void DispatchRounds(const std::vector<int64_t>& task_ids) { launcher_.DispatchRounds(task_ids); }

  // Only a reviewer task can be a round's: any other dispatch is passed over without a read.
  void OnDispatchFinished(const domain::Dispatch& d, const std::string& task_role) override;
  // Startup: advance reviews whose round tasks finished while the daemon was down.
  void Resume();

 private:
  int Ordinal(const domain::Review& r, int round);
  std::set<std::string> KnownIds(const domain::Review& r, const domain::ReviewRound& round);
  void RoundRefused(int64_t task_id, const Status& why);
  void CheckRound(domain::ReviewRound round);
  Status ReadRound(domain::Review& r, domain::ReviewRound& round, const domain::Task& task,
                   std::vector<int64_t>* to_dispatch, bool* retried);
  Status Advance(domain::Review& r, std::vector<int64_t>* to_dispatch);
  Status AdvanceDebate(domain::Review& r, const std::vector<domain::ReviewRound>& rounds,
                       bool foreign_done, std::vector<int64_t>* to_dispatch);
  void FinalizeParallel(domain::Review& r, const std::vector<domain::ReviewRound>& rounds);
  void FinalizeNoForeign(domain::Review& r);
  bool FinalizeIfFailed(domain::Review& r, const std::vector<domain::ReviewRound>& rounds);
  // The open foreign findings carried into r's revision, after this revision's answers;
  // *rest receives each round's own findings (the answers taken out).
  std::vector<domain::ReconciledFinding> Carried(
      const domain::Review& r, const std::vector<domain::ReviewRound>& rounds,
      std::vector<std::vector<domain::Finding>>* rest);

  Core& core_;
  store::ReviewStore& store_;
  RoundLauncher& launcher_;
  ReviewVerdicts& verdicts_;
};

}  // namespace conclave::service
