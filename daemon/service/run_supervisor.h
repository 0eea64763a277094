// RunSupervisor: the running workers. After a dispatch's move to running commits it launches the
// worker (exec::PlanLaunch → the Launcher), records its pid so recovery can find it (at once
// in the spawn journal, in the store with the outcome or after kRecordPidAfterMs), watches
// its output (heartbeats, the running cost against the per-dispatch cap) and, through
// ActivityWatch, the CPU and I/O of a silent run (an active run is alive: it gets activity
// heartbeats and is neither escalated nor killed as idle), escalates silence,
// stops runs on cancel / force-close / shutdown, answers liveness, and hands each finished run
// to RunCompletion. A run leaves the table only once its outcome is recorded. A writer's
// attempt after one that ended early opens with what that attempt left (domain/resume_brief,
// exec/partial_work: git on the helper pool, the launch continues on the loop).
// The spawn itself is made off the loop (exec::ProcessLauncher); until it is back, a stop is
// kept and applied on its return, shutdown waits for it, and the child is already known to
// DispatchOf by the pid the kernel wrote before the child ran.
// The launch half is in run_launch.cpp.
// Loop thread only.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "exec/cost_probe.h"
#include "exec/proc_info.h"
#include "exec/run_types.h"
#include "exec/spawn_journal.h"
#include "service/activity_watch.h"
#include "service/core.h"
#include "service/ports.h"
#include "service/run_completion.h"

namespace conclave::service {

class RunSupervisor : public RunStarter, public RunControl {
 public:
  RunSupervisor(Core& core, RunCompletion& completion)
      : core_(core),
        completion_(completion),
        journal_(exec::SpawnJournalPath(core.config.state_dir)),
        activity_(core, [this](const ActivityWatch::Report& r) { OnActivity(r); }) {}
  void Connect(TranscriptSink* transcripts) { transcripts_ = transcripts; }
  // How much the spawn journal holds before it is emptied (tests make it small).
  void SetJournalCompactAtForTest(int64_t bytes) { journal_.set_compact_at(bytes); }
  // Where runs that do not use their terminal's directory execute (reviewer rounds).
  void SetPlacement(RunPlacement* placement) { placement_ = placement; }

  void StartRuns(const std::vector<std::pair<int64_t, std::string>>& runs) override;
  void StopRun(int64_t dispatch_id, domain::StopReason reason, const std::string& detail) override;
  std::vector<Liveness> LivenessOf(const std::vector<int64_t>& task_ids) override;

  // Shutdown: stops every run (their dispatches become interrupted and re-queued) and calls
  // done once all are recorded, or after kill_grace + 2 s at the latest.
  void StopAll(std::function<void()> done);
  int running() const { return static_cast<int>(runs_.size()); }
  // Spawns under way (made off the loop, not back yet).
  int launching() const { return static_cast<int>(launching_.size()); }
  int64_t activity_scans() const { return activity_.scans(); }

  // The running dispatch whose worker is one of the processes in `chain` (pid and start time
  // both match; by pid alone while its spawn is not back yet), if any.
  std::optional<domain::Dispatch> DispatchOf(const std::vector<exec::ProcessLink>& chain);

 private:
  struct ActiveRun {
    std::shared_ptr<exec::RunHandle> run;
    int64_t last_heartbeat_ms = 0;
    exec::CostProbe cost;
    bool activity_unknown_logged = false;
    // The pid, start time and start head while not yet committed to the store (the spawn
    // journal has the pid meanwhile).
    std::optional<LaunchRecord> launch;
    std::shared_ptr<Alarm> record_pid;
    // A fresh writer's files that were already dirty at its start (read on the helper pool
    // right after the spawn; null until then, or when not a fresh writer in a repository).
    std::shared_ptr<const exec::DirtyFiles> dirty_at_start;
    bool dirty_pending = false;  // that read is under way: the completion waits for it
    std::optional<exec::RunOutcome> finished;  // the run ended while it was
  };
  // How long a run goes before its pid is written to the store on its own (a short run's
  // goes with its outcome: no commit of its own).
  static constexpr int64_t kRecordPidAfterMs = 1000;
  // exec::WorkerBaseEnv by profile name, built at a profile's first launch.
  std::map<std::string, std::map<std::string, std::string>> base_env_;

  // An attempt resuming one that ended early: its brief's opening, and where the work it
  // continues started (its claims are judged against that commit, not against the partial
  // work it found).
  struct Resume {
    std::string opening, base_head;
  };
  // What the launch keeps for when its spawn is back.
  struct Started {
    std::string resumed_head;  // a resumed writer's start head (the chain's first)
    std::string cwd;
    const exec::Profile* profile = nullptr;  // profiles are fixed for the daemon's life
    bool writer = false;
    exec::RunLimits limits;
    std::shared_ptr<std::atomic<pid_t>> pid_slot;  // the spec's early_pid
    std::shared_ptr<exec::LaunchProgress> progress;  // a fresh writer's head comes back in it
    bool resumed = false;  // an attempt resuming one that ended early
  };
  // A spawn under way: the slot the kernel fills with the child's pid before the child runs,
  // a stop asked for meanwhile, and the watch on a spawn that does not come back.
  struct Launching {
    std::shared_ptr<std::atomic<pid_t>> pid;
    std::shared_ptr<std::atomic<bool>> abandoned;  // the plan's: set with the stop
    std::optional<std::pair<domain::StopReason, std::string>> stop;
    std::shared_ptr<Alarm> overdue;  // every spawn_timeout_ms while the spawn is away
    pid_t seen = 0;                  // the child the last period ended with (0: none yet)
    int64_t since_ms = 0;            // when the launch was handed to the launcher
    bool killed = false;             // its child was killed as stuck
    std::shared_ptr<exec::LaunchProgress> progress;  // the plan's
    bool seen_preparing = false;  // the last period ended with the thread on it, no child yet
  };
  // resume: nullopt = not looked at yet.
  void Launch(int64_t dispatch_id, const std::string& token,
              std::optional<Resume> resume = std::nullopt);
  // A writer's attempt after one that ended early: reads the partial work (git) on the helper
  // pool, then launches with the resume opening. False when there is nothing to resume.
  bool LaunchResumed(const domain::Dispatch& d, const domain::Task& t,
                     const domain::Terminal& term, const std::string& token);
  StatusOr<exec::LaunchPlan> Plan(const domain::Dispatch& d, const std::string& token,
                                  const domain::Task& t, const domain::Terminal& term,
                                  const exec::Profile& p, const std::string& resume);
  exec::RunLimits LimitsFor(const domain::Dispatch& d, const exec::Profile& p) const;
  // The spawn is back (the launcher's `launched`): the run joins the table, or the dispatch
  // ends as spawn_failed.
  void Launched(int64_t dispatch_id, const Started& started,
                StatusOr<std::shared_ptr<exec::RunHandle>> run);
  exec::RunCallbacks CallbacksFor(int64_t dispatch_id);
  void RecordPid(int64_t dispatch_id);
  // Reads which files are already dirty at a fresh writer's start (helper pool).
  void SnapshotDirty(int64_t dispatch_id, const std::string& cwd,
                     std::optional<exec::SandboxPaths> sandbox);
  // Empties the spawn journal once it is full and every live run's pid is in the store.
  void MaybeClearJournal();
  void NotLaunched(int64_t dispatch_id, domain::StopReason reason, const std::string& detail);
  // The watch on a spawn under way: one whose child has existed through a whole period of
  // spawn_timeout_ms is stuck in the kernel before its program ran, and is killed (its
  // dispatch fails as spawn_failed) so the spawns queued behind it on the launcher's thread go
  // on. One still queued, or whose child appeared during the period, is given another. One the
  // thread has been on a whole period without a child (a filesystem call that hangs), or still
  // away a period after its child was killed (a wait SIGKILL cannot end), cannot be ended:
  // it is given up (GiveUp).
  void WatchSpawn(int64_t dispatch_id);
  // Ends a launch the launcher's thread is stuck in: the thread is replaced, so the launches
  // behind it go on, and the dispatch fails now as spawn_failed (or with the stop asked).
  void GiveUp(int64_t dispatch_id, const std::string& why);
  void SpawnOverdue(int64_t dispatch_id);
  void OnStdout(int64_t dispatch_id, std::string_view chunk);
  void OnOutput(int64_t dispatch_id);
  void OnActivity(const ActivityWatch::Report& r);
  // A heartbeat message (at most one per heartbeat_interval_s per run) saying which signal
  // showed the run alive: "output" or "activity".
  void Heartbeat(int64_t dispatch_id, const std::string& signal, int64_t cpu_ms, int64_t io_bytes);
  void OnIdle(int64_t dispatch_id, std::chrono::milliseconds silent);
  void OnFinished(int64_t dispatch_id, const exec::RunOutcome& outcome);
  void MaybeAllStopped();

  Core& core_;
  RunCompletion& completion_;
  RunPlacement* placement_ = nullptr;
  std::map<int64_t, ActiveRun> runs_;
  std::set<int64_t> resuming_;  // launches waiting for their partial work (LaunchResumed)
  std::map<int64_t, Launching> launching_;  // spawns under way on the launcher's thread
  int unlaunched_ = 0;          // NotLaunched outcomes not yet recorded
  bool stopping_ = false;       // StopAll ran: nothing launches any more
  std::function<void()> all_stopped_;
  TranscriptSink* transcripts_ = nullptr;
  std::shared_ptr<Alarm> stop_deadline_;
  exec::SpawnJournal journal_;
  ActivityWatch activity_;  // last: its reports reach the members above
};

}  // namespace conclave::service
