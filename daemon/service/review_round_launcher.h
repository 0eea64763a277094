// RoundLauncher: starts reviewer rounds. Launch creates a round's task (inside a write): the
// reviewer's family is derived at dispatch from the model its profile resolves to
// (domain/model_family.h) and a reviewer that would not be foreign — to the writer, to the
// primary (a challenger), to the other line (strong) — is refused: its round is recorded as
// failed and no task is made. The task's brief is the round's structured parts
// (domain/review_brief.h) with a fresh artifact nonce. Dispatch (after the commit) prepares the
// round's directory off the loop (ReviewWorkspace) and then dispatches the task to the
// reviewer's profile with a deadline of min(profile timeout_s, review.round_timeout_s); a round
// that cannot be prepared or dispatched is reported through on_refused. Loop thread only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "domain/review_record.h"
#include "exec/profile.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/review_workspace.h"
#include "service/terminal_service.h"
#include "store/review_store.h"

namespace conclave::service {

struct RoundSpec {
  int round = 0;
  std::string role, profile;  // role: primary | challenger | line
  int retry = 0;              // 0: a new round; n: the n-th retry of a malformed answer
  bool independent = false;   // sees no other round (parallel lines, --measure)
};

class RoundLauncher {
 public:
  RoundLauncher(Core& core, store::ReviewStore& store, DispatchScheduler& scheduler,
                TerminalService& terminals, ReviewWorkspace& workspace)
      : core_(core), store_(store), scheduler_(scheduler), terminals_(terminals),
        workspace_(workspace) {}
  // Called on the loop when a round's task could not be prepared or dispatched.
  std::function<void(int64_t task_id, const Status& why)> on_refused;

  // Inside a write. A new round refused at launch is recorded failed (Status OK); a retry
  // refused returns FAILED_PRECONDITION. The task to dispatch is appended to *to_dispatch.
  Status Launch(domain::Review& r, const RoundSpec& spec, std::vector<int64_t>* to_dispatch);
  // After the commit: prepares each round's directory, then dispatches its task.
  void DispatchRounds(const std::vector<int64_t>& task_ids);
  // Re-creates the directories of r's running rounds (after a restart).
  void PrepareRunning(const domain::Review& r);
  // A round's deadline: the lower of the profile's timeout_s and review.round_timeout_s.
  int RoundDeadlineS(const exec::Profile& p) const;

 private:
  std::string Refusal(const domain::Review& r, const RoundSpec& spec, const std::string& family);
  RoundDirJob JobFor(const domain::Review& r, const domain::ReviewRound& round) const;
  void Dispatch(int64_t task_id);

  Core& core_;
  store::ReviewStore& store_;
  DispatchScheduler& scheduler_;
  TerminalService& terminals_;
  ReviewWorkspace& workspace_;
};

// The rounds of r's current revision, in order.
std::vector<domain::ReviewRound> RoundsOfRevision(store::ReviewStore& store, const domain::Review& r);

}  // namespace conclave::service
