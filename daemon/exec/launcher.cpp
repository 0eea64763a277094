#include "exec/launcher.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>

#include "common/runtime.h"
#include "exec/worker_run.h"

namespace conclave::exec {

ProcessLauncher::ProcessLauncher(boost::asio::io_context& io)
    : io_(io), own_(std::make_unique<boost::asio::thread_pool>(1)), spawns_(own_->get_executor()) {
  // Made before the loop runs, the thread is SCHED_BATCH like gRPC's (common/runtime.h); it
  // stands in for the loop, which used to spawn, so it gets the loop's policy back.
  boost::asio::post(spawns_, [] { EndBackgroundThreads(); });
}

ProcessLauncher::ProcessLauncher(boost::asio::io_context& io, boost::asio::any_io_executor spawns)
    : io_(io), spawns_(std::move(spawns)) {}

ProcessLauncher::~ProcessLauncher() {
  closed_.store(true);   // what is still queued is not spawned
  if (own_) own_->join();  // a spawn under way finishes first
}

void ProcessLauncher::Start(LaunchPlan plan, RunLimits limits, RunCallbacks cb,
                            Launched launched) {
  auto kept = std::make_shared<LaunchPlan>(std::move(plan));
  boost::asio::post(spawns_, [this, kept, limits, cb = std::move(cb),
                               launched = std::move(launched)]() mutable {
    StatusOr<SpawnedChild> child =
        closed_.load()             ? FailedPrecondition("shutdown before the worker started")
        : kept->abandoned->load() ? FailedPrecondition("stopped before the worker started")
                                   : SpawnChild(kept->spec, PipeMode::kAsio);  // asio's pipes
    boost::asio::post(io_, [this, kept, limits, cb = std::move(cb),
                            launched = std::move(launched), child = std::move(child)]() mutable {
      if (!child.ok()) return launched(child.status());
      auto run = std::make_shared<WorkerRun>(io_, child.value(), kept->stdin_data,
                                             kept->transcript_path, kept->stdout_path,
                                             kept->secrets, limits, std::move(cb));
      run->SweepTree(&sweeper_, kept->tree_env, kept->sandboxed);
      run->Start();
      launched(std::shared_ptr<RunHandle>(run));
    });
  });
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
