// Launcher: starts a worker run from a LaunchPlan — the seam between the service layer and the
// operating system. ProcessLauncher is the real one: a CLONE_VFORK spawn (exec/vfork_exec) into its
// own process group, made on the launcher's own thread, then watched through a pidfd by a
// WorkerRun on the loop. Tests substitute a fake (tests/support/fake_launcher.h) that finishes
// runs on command, so scheduling, retries and the breaker are tested without processes or sleeps.
//
// Why a thread of its own: a CLONE_VFORK spawn pauses the thread that makes it until the child
// has reached execve, and the child, placed on the same CPU, often runs on after that before
// the paused thread gets the CPU back — 0.3 to 1.5 ms per spawn on a 2-CPU machine (README,
// Performance), during which a loop that spawned would answer nobody.
// The thread also does what a launch reads and writes in the worker's filesystem before the
// spawn (exec::PrepareSpawn: the dispatch's files, a writer's git HEAD), which can hang on a
// hung filesystem before any child exists. Such a thread, or one whose child SIGKILL cannot
// end, is replaced (ReplaceStuckThread): launches queued behind it go to a new thread, and
// the stuck one is left to end on its own, detached, its launch given up.
// Thread-safety: Start is called on the loop; `launched` and every callback run on the loop.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common/status.h"
#include "exec/launch_plan.h"
#include "exec/log_writer.h"
#include "exec/run_tree.h"
#include "exec/run_types.h"

namespace conclave::exec {

class Launcher {
 public:
  using Launched = std::function<void(StatusOr<std::shared_ptr<RunHandle>>)>;
  virtual ~Launcher() = default;
  // Prepares (exec::PrepareSpawn) and starts the run. `launched` is called exactly once on the
  // loop with the run, or with why it could not start — possibly before Start returns —
  // unless the launch is given up (ReplaceStuckThread). on_finished follows, later, on the
  // loop. Until `launched`, plan.spec.early_pid (when set) holds the child's pid from the
  // moment the child exists, 0 before; plan.progress says when the thread is on it.
  virtual void Start(LaunchPlan plan, RunLimits limits, RunCallbacks cb, Launched launched) = 0;
  // Shutdown: spawns not begun yet are not made; their `launched` gets an error.
  virtual void Close() {}
  // Kills the child of a spawn that has not come back (its `launched` not run yet): stuck in
  // the kernel before its program ran. The spawn then returns, and the run ends killed.
  // `slot` is the plan's early_pid. A child whose exec failed has its slot set to -pid before
  // it is reaped; any other is reaped only when its run ends. So a pidfd opened while the
  // slot still names the pid is that child's. False when nothing was signalled.
  virtual bool AbortSpawn(const std::atomic<pid_t>& slot) = 0;
  // The launch whose progress this is has been on the spawn thread a whole period without
  // coming back, stuck where no signal reaches (a filesystem call before any child exists, or
  // a child SIGKILL cannot end): it is given up (progress.given_up; its `launched` is never
  // called), and launches queued behind it go to a new thread. False when the thread is not
  // on that launch (it came back meanwhile) or cannot be replaced.
  virtual bool ReplaceStuckThread(LaunchProgress& progress) = 0;
  // Spawn threads replaced as stuck since the start, and those of them not back yet.
  virtual int replaced_threads() const { return 0; }
  virtual int stuck_threads() const { return 0; }
};

class ProcessLauncher final : public Launcher {
 public:
  // Spawns on a thread of the launcher's own.
  explicit ProcessLauncher(boost::asio::io_context& io);
  // Spawns on `spawns`, which must run one task at a time (tests hold it to catch a launch
  // between its Start and its spawn) and be drained before the launcher is destroyed.
  ProcessLauncher(boost::asio::io_context& io, boost::asio::any_io_executor spawns);
  ~ProcessLauncher() override;
  void Start(LaunchPlan plan, RunLimits limits, RunCallbacks cb, Launched launched) override;
  void Close() override { shared_->closed.store(true); }
  bool AbortSpawn(const std::atomic<pid_t>& slot) override;
  bool ReplaceStuckThread(LaunchProgress& progress) override;
  // Spawn threads replaced as stuck so far (each left detached), and those still stuck.
  int replaced_threads() const override;
  int stuck_threads() const override;
  // Threads left stuck at once, at most; past it a stuck launch is not given up.
  static constexpr int kMaxStuckThreads = 16;
  // Where the runs' output is written (tests hold it to show the loop does not wait on it).
  LogWriter& log_writer() { return *writer_; }

 private:
  struct Job;
  // What the launcher's threads share, kept alive by a replaced thread that outlives it.
  struct Shared {
    explicit Shared(boost::asio::io_context& io) : io(io) {}
    boost::asio::io_context& io;
    std::atomic<bool> closed{false};
    std::mutex mu;
    std::condition_variable wake;
    std::deque<std::shared_ptr<Job>> queue;
    uint64_t generation = 0;         // the thread that takes jobs; a replaced one takes none
    LaunchProgress* busy = nullptr;  // the launch the current thread is on
    bool gone = false;               // the launcher is destroyed: nothing more reaches io
    int replaced = 0;
    int detached = 0;  // replaced threads not back yet
  };
  static void RunJob(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Job>& job);
  static void ThreadMain(std::shared_ptr<Shared> shared, uint64_t generation);
  void Finish(const std::shared_ptr<Job>& job, StatusOr<SpawnedChild> child);

  boost::asio::io_context& io_;
  TreeSweeper sweeper_;  // stops what left a run's process group, off the loop
  std::shared_ptr<LogWriter> writer_;  // the runs' transcript and stdout.log, off the loop
  std::shared_ptr<Shared> shared_;
  std::thread thread_;  // the current spawn thread, unless an executor was given
  std::optional<boost::asio::any_io_executor> spawns_;  // the given one (tests)
};

}  // namespace conclave::exec
