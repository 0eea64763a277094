#include "exec/child_registry.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace conclave::exec {
namespace {
std::atomic<int> g_sigchld_fd{-1};

void OnSigchld(int) {
  int saved = errno;
  int fd = g_sigchld_fd.load();
  if (fd >= 0) {
    uint64_t one = 1;
    ssize_t n = write(fd, &one, sizeof one);
    (void)n;
  }
  errno = saved;
}
}  // namespace

ChildRegistry& ChildRegistry::Instance() {
  // Never destroyed: a launcher thread left detached as stuck (exec/launcher) may come back
  // while the process exits, and untrack its child.
  static ChildRegistry* r = new ChildRegistry;
  return *r;
}

pid_t ChildRegistry::SpawnTracked(std::atomic<pid_t>* slot,
                                  const std::function<pid_t()>& spawn) {
  // The lock is not held across the spawn, which lasts until the child has reached execve:
  // a sweep meanwhile knows the child by the slot the kernel fills before the child runs.
  {
    std::lock_guard<std::mutex> lock(mu_);
    slot->store(0);
    in_flight_.push_back(slot);
  }
  pid_t pid = spawn();
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.erase(std::find(in_flight_.begin(), in_flight_.end(), slot));
    if (pid > 0) tracked_.insert(pid);
  }
  // A child whose exec failed was reaped by the spawn; a sweep may have stopped in front of it.
  if (pid <= 0) ReapOrphans();
  return pid;
}

void ChildRegistry::Untrack(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  tracked_.erase(pid);
}

size_t ChildRegistry::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tracked_.size();
}

bool ChildRegistry::IsTracked(pid_t pid) const {
  std::lock_guard<std::mutex> lock(mu_);
  return tracked_.count(pid) > 0;
}

int ChildRegistry::ReapOrphans() {
  std::lock_guard<std::mutex> lock(mu_);
  int reaped = 0;
  for (;;) {
    siginfo_t si{};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0) break;
    // A tracked child first in line (or one still being spawned): its owner reaps it and
    // sweeps again afterwards.
    if (tracked_.count(si.si_pid) || SpawningLocked(si.si_pid)) break;
    siginfo_t r{};
    if (waitid(P_PID, static_cast<id_t>(si.si_pid), &r, WEXITED | WNOHANG) != 0) break;
    ++reaped;
  }
  return reaped;
}

bool ChildRegistry::SpawningLocked(pid_t pid) const {
  for (const auto* slot : in_flight_) {
    if (pid_t p = slot->load(); p == pid || p == -pid) return true;  // -pid: being reaped
  }
  return false;
}

pid_t WaitPid(pid_t pid, int* status, int options) {
  pid_t r;
  do {
    r = waitpid(pid, status, options);
  } while (r < 0 && errno == EINTR);
  return r;
}

namespace {
sigset_t ChildSignal() {
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  return child;
}
}  // namespace

void BlockChildSignal() {
  const sigset_t child = ChildSignal();
  pthread_sigmask(SIG_BLOCK, &child, nullptr);
}

OrphanReaper::OrphanReaper(boost::asio::io_context& io) : event_(io), signals_(io) {}

OrphanReaper::~OrphanReaper() {
  g_sigchld_fd.store(-1);
  signal(SIGCHLD, SIG_DFL);
}

void OrphanReaper::Start() {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd >= 0) {
    event_.assign(fd);
    g_sigchld_fd.store(fd);
    Arm();
  }
  struct sigaction sa {};
  sa.sa_handler = OnSigchld;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART restarts read() and the like; epoll_wait, poll and sleeps still return early in
  // a thread that takes the signal: so none is meant to.
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, nullptr);
  const sigset_t child = ChildSignal();
  int sfd = signalfd(-1, &child, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd >= 0) {
    signals_.assign(sfd);
    ArmSignals();
  } else {
    pthread_sigmask(SIG_UNBLOCK, &child, nullptr);  // the handler's way, on this thread
  }
  ChildRegistry::Instance().ReapOrphans();
}

void OrphanReaper::ArmSignals() {
  // Reads what is pending (one SIGCHLD however many children exited) and sweeps them all.
  signals_.async_read_some(boost::asio::buffer(infos_.data(), sizeof infos_),
                           [this](const boost::system::error_code& ec, size_t) {
                             if (ec) return;
                             ChildRegistry::Instance().ReapOrphans();
                             ArmSignals();
                           });
}

void OrphanReaper::Arm() {
  event_.async_read_some(boost::asio::buffer(&buf_, sizeof buf_),
                         [this](const boost::system::error_code& ec, size_t) {
                           if (ec) return;
                           ChildRegistry::Instance().ReapOrphans();
                           Arm();
                         });
}

}  // namespace conclave::exec
