#include "exec/launcher.h"
#include "common/loop_kick.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <system_error>

#include "common/runtime.h"
#include "common/thread_name.h"
#include "exec/child_registry.h"
#include "exec/worker_run.h"

namespace conclave::exec {

struct ProcessLauncher::Job {
  LaunchPlan plan;
  RunLimits limits;
  RunCallbacks cb;
  Launched launched;
  ProcessLauncher* owner = nullptr;  // used on the loop only, while the launcher lives
};

namespace {

// A child made by a launch given up meanwhile, on a thread that is no longer the launcher's:
// killed and reaped here, never run. It was made by SpawnChild, so it is tracked until reaped.
// With `wait` false (the launcher is being destroyed; a reap could wait on a child SIGKILL
// cannot end) it is killed and left to the orphan sweep, or to the process's exit.
void DiscardChild(SpawnedChild& child, bool wait) {
  ::kill(-child.pid, SIGKILL);  // its own process group, which it has not left yet
  ::kill(child.pid, SIGKILL);
  int status = 0;
  if (wait) WaitPid(child.pid, &status, 0);
  ChildRegistry::Instance().Untrack(child.pid);
  ChildRegistry::Instance().ReapOrphans();  // and what queued behind it
  for (int fd : {child.pidfd, child.stdin_fd, child.stdout_fd, child.stderr_fd, child.stdout_hold,
                 child.stderr_hold}) {
    if (fd >= 0) close(fd);
  }
}

}  // namespace

ProcessLauncher::ProcessLauncher(boost::asio::io_context& io)
    : io_(io), writer_(std::make_shared<LogWriter>()), shared_(std::make_shared<Shared>(io)) {
  // Made before the loop runs, the thread is SCHED_BATCH like gRPC's (common/runtime.h); it
  // stands in for the loop, which used to spawn, so it gets the loop's policy back.
  thread_ = std::thread(ThreadMain, shared_, 0);
  NameThread(thread_, "launcher");
}

ProcessLauncher::ProcessLauncher(boost::asio::io_context& io, boost::asio::any_io_executor spawns)
    : io_(io),
      writer_(std::make_shared<LogWriter>()),
      shared_(std::make_shared<Shared>(io)),
      spawns_(std::move(spawns)) {}

ProcessLauncher::~ProcessLauncher() {
  shared_->closed.store(true);  // what is still queued is not spawned
  {
    std::lock_guard lock(shared_->mu);
    shared_->gone = true;  // nothing more is posted to the loop; a late child is discarded
  }
  shared_->wake.notify_all();
  // A spawn under way finishes first. A thread replaced as stuck was detached: it holds only
  // the shared state, and discards what it comes back with.
  if (thread_.joinable()) thread_.join();
  // What runs have handed the writer is written before the launcher goes (main's loop has
  // stopped by then: outcomes it posts are not run); a run still going writes on the caller's
  // thread from now on.
  writer_->Close();
}

void ProcessLauncher::ThreadMain(std::shared_ptr<Shared> shared, uint64_t generation) {
  EndBackgroundThreads();
  std::unique_lock lock(shared->mu);
  for (;;) {
    shared->wake.wait(lock, [&] {
      return shared->generation != generation || shared->gone || !shared->queue.empty();
    });
    if (shared->generation != generation) {  // replaced as stuck, and now back
      --shared->detached;
      return;
    }
    if (shared->queue.empty()) return;  // the launcher is gone and nothing is queued
    auto job = std::move(shared->queue.front());
    shared->queue.pop_front();
    shared->busy = job->plan.progress.get();
    lock.unlock();
    RunJob(shared, job);
    lock.lock();
  }
}

void ProcessLauncher::RunJob(const std::shared_ptr<Shared>& shared,
                             const std::shared_ptr<Job>& job) {
  LaunchPlan& plan = job->plan;
  LaunchProgress& progress = *plan.progress;
  progress.on_thread.store(true);
  auto prepared_and_spawned = [&]() -> StatusOr<SpawnedChild> {
    if (shared->closed.load()) return FailedPrecondition("shutdown before the worker started");
    if (plan.abandoned->load()) return FailedPrecondition("stopped before the worker started");
    // The dispatch's files and a writer's HEAD: the worker's filesystem, which may hang.
    if (Status s = PrepareSpawn(plan); !s.ok()) return s;
    // Checked again: the preparing may have been what took long (a give-up sets abandoned).
    if (shared->closed.load()) return FailedPrecondition("shutdown before the worker started");
    if (plan.abandoned->load() || progress.given_up.load()) {
      return FailedPrecondition("stopped before the worker started");
    }
    // asio's pipes; the run learns of the exit from the pidfd (exec/worker_run)
    plan.spec.hold_output_ends = true;
    return SpawnChild(plan.spec, PipeMode::kAsio);
  };
  StatusOr<SpawnedChild> child = prepared_and_spawned();
  progress.on_thread.store(false);
  bool posted = false, gone = false;
  {
    std::lock_guard lock(shared->mu);
    gone = shared->gone;
    if (shared->busy == &progress) shared->busy = nullptr;
    // Under the lock: the launcher's destructor, or a give-up, comes wholly before or after.
    if (!shared->gone && !progress.given_up.load()) {
      posted = true;
      PostToLoop(shared->io, [job, child = std::move(child)]() mutable {
        job->owner->Finish(job, std::move(child));
      });
    }
  }
  if (!posted && child.ok()) DiscardChild(child.value(), /*wait=*/!gone);
}

void ProcessLauncher::Start(LaunchPlan plan, RunLimits limits, RunCallbacks cb,
                            Launched launched) {
  auto job = std::make_shared<Job>();
  job->plan = std::move(plan);
  job->limits = limits;
  job->cb = std::move(cb);
  job->launched = std::move(launched);
  job->owner = this;
  if (spawns_) {
    boost::asio::post(*spawns_, [shared = shared_, job] { RunJob(shared, job); });
    return;
  }
  {
    std::lock_guard lock(shared_->mu);
    shared_->queue.push_back(std::move(job));
  }
  shared_->wake.notify_one();
}

void ProcessLauncher::Finish(const std::shared_ptr<Job>& job, StatusOr<SpawnedChild> child) {
  if (!child.ok()) return job->launched(child.status());
  const LaunchPlan& plan = job->plan;
  auto run = std::make_shared<WorkerRun>(io_, child.value(), plan.stdin_data, plan.transcript_path,
                                         plan.stdout_path, plan.secrets, job->limits,
                                         std::move(job->cb), writer_);
  run->SweepTree(&sweeper_, plan.tree_env, plan.sandboxed);
  run->Start();
  job->launched(std::shared_ptr<RunHandle>(run));
}

bool ProcessLauncher::ReplaceStuckThread(LaunchProgress& progress) {
  std::lock_guard lock(shared_->mu);
  if (spawns_ || shared_->gone || shared_->busy != &progress || !progress.on_thread.load()) {
    return false;
  }
  // Each thread left stuck keeps its stacks until the kernel lets it go: a hung mount retried
  // for ever must not grow the daemon without bound. Past the limit the queue waits for it.
  if (shared_->detached >= kMaxStuckThreads) return false;
  const uint64_t next = shared_->generation + 1;
  std::thread fresh;
  try {
    fresh = std::thread(ThreadMain, shared_, next);
    NameThread(fresh, "launcher");
  } catch (const std::exception&) {
    // No thread to be had (EAGAIN, or no memory for its state or stack): the old one keeps
    // the queue.
    return false;
  }
  // The new thread waits on the lock held here; the stuck one sees the new generation when
  // it comes back, and ends. It is never joined.
  shared_->generation = next;
  progress.given_up.store(true);
  shared_->busy = nullptr;
  ++shared_->replaced;
  ++shared_->detached;
  thread_.detach();
  thread_ = std::move(fresh);
  return true;
}

int ProcessLauncher::replaced_threads() const {
  std::lock_guard lock(shared_->mu);
  return shared_->replaced;
}

int ProcessLauncher::stuck_threads() const {
  std::lock_guard lock(shared_->mu);
  return shared_->detached;
}

bool ProcessLauncher::AbortSpawn(const std::atomic<pid_t>& slot) {
  // SIGKILL ends a sleep the child cannot be woken from otherwise, if the sleep is killable
  // (a lease break, most FUSE and NFS waits); the CLONE_VFORK wait then returns.
  pid_t child = slot.load();
  if (child <= 0) return false;
  int fd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (fd < 0) {
    // A kernel without pidfds (before 5.3), as exec/run_tree allows: the slot checked again
    // just before kill() — a narrower window, the best that kernel offers.
    return errno == ENOSYS && slot.load() == child && ::kill(child, SIGKILL) == 0;
  }
  bool sent = slot.load() == child && syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0) == 0;
  close(fd);
  return sent;
}

}  // namespace conclave::exec
