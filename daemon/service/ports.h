// Ports: the small named interfaces through which the service parts reach each other without
// a cycle of concrete dependencies (wired once by Services). Loop thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "domain/caller.h"
#include "domain/caller_identity.h"
#include "domain/dispatch.h"
#include "domain/gate.h"
#include "domain/message.h"
#include "domain/outcome.h"
#include "domain/task.h"

namespace conclave::service {

// Liveness of the active dispatch of a task (answered to a Wait that timed out).
struct Liveness {
  int64_t task_id = 0, dispatch_id = 0, last_output_age_ms = -1;
  bool process_alive = false;
  int pid = 0;  // the run's process while it is supervised (0 when not)
  std::string state;
};

// A socket of its own for one dispatch (api/DispatchSocketListener): whoever connects through
// it is that dispatch's worker, with a worker's rights only. A sandboxed worker gets it bound
// where the daemon's socket would be.
class DispatchSockets {
 public:
  virtual ~DispatchSockets() = default;
  // Creates and listens on the dispatch's socket; returns its path.
  virtual StatusOr<std::string> Open(int64_t dispatch_id) = 0;
  // Stops listening and removes it (nothing when it was never opened).
  virtual void Close(int64_t dispatch_id) = 0;
};

// Cleans the worktrees of flows that ended (ready or cancelled) before a time (FlowService),
// for retention.
class FlowSweeper {
 public:
  virtual ~FlowSweeper() = default;
  virtual void CleanEndedBefore(int64_t cutoff_ms) = 0;
};

// A flow's decision gate was resolved (inside the resolving write; FlowService moves the flow
// in that same write). An error refuses the resolution: the write is undone.
class FlowGateListener {
 public:
  virtual ~FlowGateListener() = default;
  virtual Status OnFlowGateResolved(const domain::Gate& g, const std::string& reason) = 0;
};

// Where an operational retry goes instead of the same target (FlowService: a flow's writer
// swapped to another profile of its family after operational trouble). Inside the write.
class RetryTargets {
 public:
  virtual ~RetryTargets() = default;
  virtual std::optional<std::string> SwapTarget(const domain::Dispatch& d, const domain::Task& t) = 0;
};

// Stops and inspects running workers (RunSupervisor).
class RunControl {
 public:
  virtual ~RunControl() = default;
  // Ends a running dispatch's worker; its completion follows as usual. No-op when not running.
  virtual void StopRun(int64_t dispatch_id, domain::StopReason reason, const std::string& detail) = 0;
  virtual std::vector<Liveness> LivenessOf(const std::vector<int64_t>& task_ids) = 0;
};

// Starts the workers of dispatches whose row moved to running has just committed (RunSupervisor).
class RunStarter {
 public:
  virtual ~RunStarter() = default;
  // (dispatch id, its plaintext token — only the hash is stored).
  virtual void StartRuns(const std::vector<std::pair<int64_t, std::string>>& runs) = 0;
};

// Re-runs the queue (DispatchScheduler): after a gate resolves, a terminal frees up...
class QueuePump {
 public:
  virtual ~QueuePump() = default;
  virtual void Pump() = 0;
};

// Live transcripts (TranscriptFollower): output was appended to a dispatch's transcript; the
// run ended and its transcript is complete (called once its outcome's write was made).
class TranscriptSink {
 public:
  virtual ~TranscriptSink() = default;
  virtual void OnAppended(int64_t dispatch_id) = 0;
  virtual void OnFinished(int64_t dispatch_id) = 0;
};

// Told after a dispatch's outcome committed (ReviewService, FlowService), with its task's
// role (which never changes): a listener that cares only for some roles looks at it before
// reading anything.
class DispatchListener {
 public:
  virtual ~DispatchListener() = default;
  virtual void OnDispatchFinished(const domain::Dispatch& d, const std::string& task_role) = 0;
};

// Where a run executes when not in its terminal's directory (ReviewWorkspace: a reviewer
// round runs in a directory of its own holding only the artifact, outside the state dir).
struct RunPlace {
  std::string workdir;      // the working directory
  std::string private_dir;  // where its isolated HOME/TMPDIR go
};
class RunPlacement {
 public:
  virtual ~RunPlacement() = default;
  // nullopt: the run uses its terminal's directory and its dispatch directory as usual.
  virtual std::optional<RunPlace> PlaceFor(const domain::Task& t, const domain::Dispatch& d) = 0;
};

// Told, inside the write that resolves it, that a decision gate over a review was resolved
// (ReviewVerdicts records the sign-off). An error rolls the resolution back.
class ReviewGateListener {
 public:
  virtual ~ReviewGateListener() = default;
  virtual Status OnReviewGateResolved(const domain::Gate& g, const domain::CallerIdentity& caller,
                                      const std::string& reason) = 0;
};

// Refuses a worker's call outside its own dispatch and escalates it (Callers).
class RefusalLog {
 public:
  virtual ~RefusalLog() = default;
  virtual Status Refuse(const domain::Caller& caller, domain::Rpc rpc, const std::string& why) = 0;
};

// Checks a worker's own report (worker_done, heartbeat...) against its dispatch token and
// binds it to that dispatch (WorkerReports). Call inside a write.
class WorkerReportCheck {
 public:
  virtual ~WorkerReportCheck() = default;
  virtual Status CheckWorkerReport(domain::MessageRecord& m, const std::string& token) = 0;
};

}  // namespace conclave::service
