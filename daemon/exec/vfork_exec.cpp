#include "exec/vfork_exec.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "exec/child_registry.h"

// The child's kernel sigaction layout and 64 signals in an 8-byte set are those of x86_64 and
// aarch64; close_range needs Linux 5.9 (before that every descriptor up to the limit is closed).
#if !defined(__x86_64__) && !defined(__aarch64__)
#error "exec/vfork_exec: the kernel sigaction layout is only known for x86_64 and aarch64"
#endif
#if defined(__SANITIZE_THREAD__)
#error "exec/vfork_exec: ThreadSanitizer intercepts clone and would run in the shared child"
#endif

namespace conclave::exec {
namespace {

// The child's frames are a few hundred bytes; the rest is headroom. The lowest page is a guard.
constexpr size_t kStackBytes = 64 * 1024;

class KeptStack {
 public:
  ~KeptStack() {
    if (base_) munmap(base_, kStackBytes + page_);
    base_ = nullptr;  // a spawn after this (a later thread_local's destructor) maps anew
  }
  // The stack's top (it grows down), mapped on the thread's first spawn; nullptr if it cannot be.
  char* Top() {
    if (!base_) {
      page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
      void* m = mmap(nullptr, kStackBytes + page_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      if (m == MAP_FAILED) return nullptr;
      base_ = static_cast<char*>(m);
      mprotect(base_, page_, PROT_NONE);
    }
    return base_ + kStackBytes + page_;
  }

 private:
  char* base_ = nullptr;
  size_t page_ = 0;
};

thread_local KeptStack t_stack;

// Shared between the paused caller and the child (CLONE_VM): the child writes, the caller
// reads once the clone has returned.
struct Shared {
  const ExecRequest* req;
  volatile int error;
  const char* volatile step;
};

// The kernel's struct sigaction (not glibc's, whose mask is 128 bytes).
struct KernelSigaction {
  void* handler;  // SIG_DFL
  unsigned long flags;
  void* restorer;
  uint64_t mask;
};
constexpr long kSigsetBytes = sizeof(uint64_t);
constexpr int kLastSignal = 64;

[[noreturn]] __attribute__((no_sanitize("address", "undefined", "thread"))) void Fail(
    Shared* s, const char* step) {
  s->error = errno != 0 ? errno : EINVAL;
  s->step = step;
  syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

__attribute__((no_sanitize("address", "undefined", "thread"))) int ChildMain(void* arg) {
  auto* s = static_cast<Shared*>(arg);
  const ExecRequest& r = *s->req;
  KernelSigaction dfl{};
  for (int sig = 1; sig <= kLastSignal; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    syscall(SYS_rt_sigaction, sig, &dfl, nullptr, kSigsetBytes);
  }
  if (r.sched_other) {
    sched_param normal{};
    if (syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &normal) != 0) Fail(s, "sched");
  }
  if (syscall(SYS_setpgid, 0, 0) != 0) Fail(s, "setpgid");
  // A source below 3 that is not its own target moves up first, so that no dup3 overwrites a
  // source a later one still needs (a daemon started with 0-2 closed gets pipes there).
  int fd[3] = {r.stdio[0], r.stdio[1], r.stdio[2]};
  for (int i = 0; i < 3; ++i) {
    if (fd[i] >= 0 && fd[i] < 3 && fd[i] != i) {
      long up = syscall(SYS_fcntl, fd[i], F_DUPFD, 3);
      if (up < 0) Fail(s, "dup");
      fd[i] = static_cast<int>(up);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (fd[i] < 0) continue;
    // Already in place: only its close-on-exec flag goes (what dup3 would have cleared).
    long rc = fd[i] == i ? syscall(SYS_fcntl, i, F_SETFD, 0) : syscall(SYS_dup3, fd[i], i, 0);
    if (rc < 0) Fail(s, "dup");
  }
  if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
    // A kernel before 5.9: every descriptor up to the limit.
    rlimit lim{};
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &lim) != 0) Fail(s, "close");
    rlim_t top = lim.rlim_cur < (1u << 20) ? lim.rlim_cur : (1u << 20);
    for (rlim_t f = 3; f < top; ++f) syscall(SYS_close, static_cast<int>(f));
  }
  if (r.cwd && r.cwd[0] && syscall(SYS_chdir, r.cwd) != 0) Fail(s, "chdir");
  if (r.nice_floor > -20) {
    // Last, so the paused caller never waits on a child it already made nicer. Best effort:
    // a process may always lower its own priority. The raw getpriority returns 20 - nice.
    long now = syscall(SYS_getpriority, PRIO_PROCESS, 0);
    long floor = r.nice_floor > 19 ? 19 : r.nice_floor;
    if (now > 0 && 20 - now < floor) syscall(SYS_setpriority, PRIO_PROCESS, 0, floor);
  }
  uint64_t none = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, kSigsetBytes);
  syscall(SYS_execve, r.path, r.argv, r.envp);
  Fail(s, "execve");
}

}  // namespace

ExecResult VforkExec(const ExecRequest& req) {
  ExecResult out;
  char* top = t_stack.Top();
  if (!top) {
    out.error = ENOMEM;
    out.step = "stack";
    return out;
  }
  Shared shared{&req, 0, ""};
  const int saved_errno = errno;
  // Every signal blocked, glibc's internal ones included, until the child has put every
  // disposition back to the default: no handler of the daemon's runs in the child.
  uint64_t all = ~uint64_t{0}, old = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, kSigsetBytes);
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD;
  if (req.parent_tid) flags |= CLONE_PARENT_SETTID;
  pid_t pid = clone(ChildMain, top, flags, &shared, req.parent_tid);
  const int clone_errno = errno;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, kSigsetBytes);
  if (pid < 0) {
    out.error = clone_errno;
    out.step = "clone";
    return out;
  }
  if (shared.error != 0) {
    // While it is reaped the slot holds -pid: not a child to signal any more (a reader that
    // checks the slot again around a pidfd_open knows the pidfd is this child's,
    // ProcessLauncher::AbortSpawn), but still one being spawned, which the orphan sweep leaves
    // to this thread (ChildRegistry matches ±pid). 0 once the number may be another's.
    if (req.parent_tid) __atomic_store_n(req.parent_tid, -pid, __ATOMIC_RELEASE);
    int status = 0;
    WaitPid(pid, &status, 0);
    if (req.parent_tid) __atomic_store_n(req.parent_tid, 0, __ATOMIC_RELEASE);
    out.error = shared.error;
    out.step = shared.step;
    errno = saved_errno;
    return out;
  }
  errno = saved_errno;
  out.pid = pid;
  return out;
}

}  // namespace conclave::exec
