// ChildRegistry: the daemon's direct children whose owner reaps them itself (a worker's run
// through its pidfd, a helper command through waitpid). With PR_SET_CHILD_SUBREAPER, workers'
// orphaned descendants (double forks, setsid) are re-parented to the daemon and stay its
// descendants; ReapOrphans reaps those — and only those — so no owner ever loses its child's
// exit status. A child being spawned is known to a sweep from the moment it exists: the kernel
// writes its pid into the spawn's slot before it runs (CLONE_PARENT_SETTID), and the slot is
// registered before the spawn starts. No lock is held across a spawn, so a sweep on the loop
// never waits for another thread's child to reach execve.
// OrphanReaper: wakes the loop on SIGCHLD (read from a signalfd: every thread blocks it) and
// sweeps.
// Thread-safety: ChildRegistry is thread-safe; OrphanReaper lives on the loop.
#pragma once

#include <sys/signalfd.h>
#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <array>
#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

namespace conclave::exec {

class ChildRegistry {
 public:
  static ChildRegistry& Instance();

  // Runs spawn() (which returns the new child's pid, or <= 0) and tracks the child. spawn must
  // have the kernel write the child's pid into slot before the child runs (ExecRequest's
  // parent_tid); until spawn returns, a sweep leaves the child whose pid the slot holds alone.
  pid_t SpawnTracked(std::atomic<pid_t>* slot, const std::function<pid_t()>& spawn);
  // The owner reaped pid (or gave it up).
  void Untrack(pid_t pid);
  // Reaps every exited child that no owner tracks; returns how many.
  int ReapOrphans();
  size_t tracked() const;
  bool IsTracked(pid_t pid) const;

 private:
  bool SpawningLocked(pid_t pid) const;
  mutable std::mutex mu_;
  std::set<pid_t> tracked_;
  std::vector<std::atomic<pid_t>*> in_flight_;  // the slots of spawns under way
};

// Waits for pid like waitpid(pid, &status, options), retrying on EINTR.
pid_t WaitPid(pid_t pid, int* status, int options);

// SIGCHLD interrupts no thread. The kernel gives a child's SIGCHLD to the thread that spawned it
// unless that thread blocks it, else to any thread that does not: the launcher's thread, asleep
// on its queue by the time a worker exits, was woken for each, ran the handler and slept again,
// once a dispatch. main blocks it before any thread starts, so every thread inherits the mask,
// and the loop reads it from a signalfd (OrphanReaper). A child starts with no signal blocked,
// whatever its spawning thread blocks (exec/vfork_exec).
void BlockChildSignal();

class OrphanReaper {
 public:
  explicit OrphanReaper(boost::asio::io_context& io);
  ~OrphanReaper();
  // Makes the daemon a child subreaper and starts sweeping on SIGCHLD: read from a signalfd
  // when every thread blocks it (BlockChildSignal), and from a handler that wakes the loop
  // through an eventfd in a thread that takes it after all. Without a signalfd, the calling
  // thread and the threads it starts from then on take the signal again, through the handler.
  void Start();

 private:
  void Arm();
  void ArmSignals();
  boost::asio::posix::stream_descriptor event_;
  uint64_t buf_ = 0;
  boost::asio::posix::stream_descriptor signals_;
  std::array<signalfd_siginfo, 4> infos_{};
};

}  // namespace conclave::exec
