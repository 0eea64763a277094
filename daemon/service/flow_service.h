// FlowService: flows as the API sees them — start (idempotent by key), show, list, wait for
// an end (a long-poll answered when the flow reaches ready / needs_human / failed /
// cancelled), cancel, clean — and the engine that drives each flow through its recorded steps
// (worktree → implement → verify → review → ready). Every step is recorded before it acts and
// after: a step's task is made with a deterministic key and recorded before it is dispatched,
// so a restarted daemon resumes the step (Resume) and never runs a finished round again. Git
// work runs on the helper pool and comes back as a write. Step changes are `flow` messages to
// the flow's coordinator. Loop thread only.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "domain/flow.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/flow_reads.h"
#include "service/ports.h"
#include "service/review_rounds.h"
#include "service/review_service.h"
#include "service/task_service.h"
#include "service/waiter_table.h"
#include "service/write_then.h"
#include "store/flow_store.h"

namespace conclave::service {

struct StartFlowInput {
  std::string repo, brief, writer, base, title, review_mode, ship, key, coordinator;
  std::vector<std::string> verify, reviewers;
  int cap = -1, max_fix_rounds = -1;  // -1 = default
  double budget_usd = 0;              // the flow's spend cap; 0 = none
};

class FlowService : public DispatchListener,
                    public ReviewFinished,
                    public FlowSweeper,
                    public FlowGateListener,
                    public RetryTargets {
 public:
  FlowService(Core& core, store::FlowStore& store, TaskService& tasks,
              DispatchScheduler& scheduler, ReviewService& reviews,
              store::ReviewStore& review_store)
      : core_(core), store_(store), tasks_(tasks), scheduler_(scheduler), reviews_(reviews),
        review_store_(review_store), waiters_(core.clock, [this](int64_t id) { return Get(id); }) {}

  void Start(StartFlowInput in, Done<FlowView> done);
  StatusOr<FlowView> Get(int64_t id);
  // status "" = any (else one of domain::FlowStatuses()).
  StatusOr<std::vector<FlowView>> List(const std::string& status, int limit);
  void Wait(int64_t id, int64_t timeout_ms, Done<FlowView> done);
  void Cancel(int64_t id, Done<FlowView> done);
  // id 0: every ended flow not yet cleaned.
  void Clean(int64_t id, Done<std::vector<FlowView>> done);
  // Retention: cleans ready and cancelled flows last changed before cutoff_ms, the oldest
  // change first, 100 of each status at a time (a full batch asks for the next when done).
  void CleanEndedBefore(int64_t cutoff_ms) override;

  void OnDispatchFinished(const domain::Dispatch& d, const std::string& task_role) override;
  void OnReviewFinished(int64_t review_id) override;
  // "another-round" reopens the flow at implement with the person's reason in the brief;
  // "cancel" cancels it. Refused while the flow's worktree is being removed (a clean), so
  // the person's decision is not lost on a flow that then ends up cleaned.
  Status OnFlowGateResolved(const domain::Gate& g, const std::string& reason) override;
  // Seed 001's writer swap: after two operational failures in a row (rate limit, provider
  // down, timeout, transport, lost heartbeat) of a flow's implement step, its retry goes to
  // another loaded model profile of the writer's family (never another family) in the same
  // worktree; the resumed attempt opens with the partial work ("verify and finalize").
  std::optional<std::string> SwapTarget(const domain::Dispatch& d, const domain::Task& t) override;
  // The writer terminal of the flow's current writer profile.
  std::string WriterHandle(const domain::Flow& f);
  // Startup: every running flow goes on from its recorded step.
  void Resume();
  void ExpireWaiters() { waiters_.ExpireAll(); }
  // Shutdown: no further retention batch starts.
  void Stop() { stopped_ = true; }
  size_t waiter_count() const { return waiters_.count(); }

 private:

  Status Validate(StartFlowInput& in);
  FlowView View(const domain::Flow& f);
  // Removes the flows' worktrees on the helpers' thread, then marks them cleaned and closes
  // their idle terminals in one write; done gets their views. Meanwhile they are in
  // cleaning_: not reopened, not taken by another clean.
  void CleanFlows(std::vector<domain::Flow> flows, Done<std::vector<FlowView>> done);
  void WakeWaiters(int64_t id) { waiters_.Wake(id); }

  // The engine (flow_steps.cpp).
  void Advance(int64_t id);
  void StepWorktree(const domain::Flow& f);
  void StepImplement(const domain::Flow& f);
  void AfterImplement(const domain::Flow& f);
  void StepVerify(const domain::Flow& f);
  void StepReview(const domain::Flow& f);
  void OnVerdict(const domain::Flow& f, const domain::Review& r);
  void Ship(const domain::Flow& f, const std::string& why);
  // Inside a write: makes (or finds by key) the current step's task and records it.
  Status MakeStepTask(domain::Flow& f, const std::string& what, const std::string& role,
                      const std::string& brief);
  void DispatchStepTask(const domain::Flow& f, const std::string& to);
  // Implement steps of other flows whose writer is dispatched; flows waiting for a writer slot.
  int WritersRunning(int64_t except);
  // Like Change, for a flow stopped at needs_human (a person's decision reopens it).
  void Reopen(int64_t id, std::function<Status(domain::Flow&)> fn);
  // Reopen's body, inside a write the caller holds.
  Status ReopenIn(int64_t id, const std::function<Status(domain::Flow&)>& fn);
  // A writer profile's family as the review sees it (derived from the model it runs).
  std::string WriterFamily(const exec::Profile& p) const;
  // Another flow in the same repository is implementing with a SCOPE: overlapping f's.
  bool ScopeBusy(const domain::Flow& f);
  void PumpWriters();
  // Its own write: fn changes the flow (running, at `step`); the flow is saved and advanced.
  void Change(int64_t id, domain::FlowStep step, std::function<Status(domain::Flow&)> fn);
  // Inside a write: moves f, saves it, tells the coordinator.
  Status Move(domain::Flow& f, domain::FlowStep to, const std::string& note,
              const std::string& priority = "normal");
  // Inside a write: a fix round with `why`, or needs_human when the rounds are spent.
  Status FixRound(domain::Flow& f, const std::string& why);
  template <typename T>
  void OffLoop(int64_t id, std::function<T()> work, std::function<void(T)> then);

  Core& core_;
  store::FlowStore& store_;
  TaskService& tasks_;
  DispatchScheduler& scheduler_;
  ReviewService& reviews_;
  store::ReviewStore& review_store_;
  std::set<int64_t> busy_, again_;  // flows with git work in flight / to advance after it
  std::set<int64_t> cleaning_;      // flows whose worktree a clean is removing
  bool stopped_ = false;
  WaiterTable<FlowView> waiters_;
};

}  // namespace conclave::service
