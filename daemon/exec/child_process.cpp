#include "exec/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/runtime.h"
#include "exec/child_registry.h"
#include "exec/proc_info.h"
#include "exec/vfork_exec.h"

namespace conclave::exec {
namespace {

std::atomic<int> g_child_nice{0};  // SetChildNice
std::atomic<int> g_base_nice{0};   // the nice of SetChildNice's caller when it was called

struct Pipe {
  int r = -1, w = -1;
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

int TakeFd(int& fd) {
  int out = fd;
  fd = -1;
  return out;
}

std::string ErrnoText(int err) { return std::strerror(err); }

// One read-only /dev/null for the daemon's life (close-on-exec: only dup'd into a child); -1
// while it cannot be opened (tried again next time), and the caller makes a pipe instead.
int DevNull() {
  static std::atomic<int> kept{-1};
  int fd = kept.load(std::memory_order_acquire);
  if (fd >= 0) return fd;
  fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int expected = -1;
  if (!kept.compare_exchange_strong(expected, fd, std::memory_order_acq_rel)) {
    close(fd);  // another thread kept one first
    return expected;
  }
  return fd;
}

}  // namespace

std::string FindOnPath(const std::string& program, const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) {
    return access(program.c_str(), X_OK) == 0 ? program : "";
  }
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& e : env) {
    if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    std::string dir =
        path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

void SetChildNice(int increment) {
  errno = 0;
  const int base = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  g_base_nice.store(errno == 0 ? base : 0);
  g_child_nice.store(increment < 0 ? 0 : increment > 19 ? 19 : increment);
}

int ChildNiceFloor() {
  // 0 (and before SetChildNice): nothing to do, so nothing done — no system call in the child.
  const int increment = g_child_nice.load();
  if (increment == 0) return kKeepNice;
  const int floor = g_base_nice.load() + increment;
  return floor > 19 ? 19 : floor;
}

void NiceThisThreadAsChildren() {
  // Best effort, for this thread alone (a thread's nice is its own on Linux).
  const id_t self = static_cast<id_t>(gettid());
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, self);
  const int floor = ChildNiceFloor();
  if (errno == 0 && floor != kKeepNice && now < floor) setpriority(PRIO_PROCESS, self, floor);
}

StatusOr<SpawnedChild> SpawnChild(const SpawnSpec& spec, PipeMode mode) {
  if (spec.argv.empty()) return InvalidArgument("command: empty argv");
  std::string program = FindOnPath(spec.argv[0], spec.env);
  if (program.empty()) {
    return FailedPrecondition("spawn: program '" + spec.argv[0] + "' not found on PATH");
  }
  // No pipe for a stdin nothing will be written to: the kept /dev/null reads as the closed
  // pipe did (end of file at once), without a pipe made, watched and closed per spawn.
  const int null_in = spec.stdin_null ? DevNull() : -1;
  Pipe in, out, err;
  int fds[2];
  if (null_in < 0) {
    if (pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
    in.r = fds[0], in.w = fds[1];
  }
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
  out.r = fds[0], out.w = fds[1];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
  err.r = fds[0], err.w = fds[1];

  std::vector<char*> argv, envp;
  argv.reserve(spec.argv.size() + 1);
  envp.reserve(spec.env.size() + 1);
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  ExecRequest req;
  req.path = program.c_str();
  req.argv = argv.data();
  req.envp = envp.data();
  req.stdio[0] = null_in >= 0 ? null_in : in.r;
  req.stdio[1] = out.w;
  req.stdio[2] = err.w;
  req.cwd = spec.cwd.c_str();
  // A helper thread's SCHED_BATCH (common/runtime.h) is the daemon's own: not the child's.
  req.sched_other = InBackgroundThread();
  req.nice_floor = ChildNiceFloor();
  // The kernel stores the pid as a plain int: an atomic of the same size that needs no lock.
  static_assert(sizeof(std::atomic<pid_t>) == sizeof(pid_t) &&
                std::atomic<pid_t>::is_always_lock_free);
  std::atomic<pid_t> own_slot{0};
  std::atomic<pid_t>* slot = spec.early_pid ? spec.early_pid : &own_slot;
  req.parent_tid = reinterpret_cast<pid_t*>(slot);

  ExecResult spawned;
  // Known to the orphan sweep from the moment it exists (the slot), tracked once spawned.
  BootTicks before, after;
  ChildRegistry::Instance().SpawnTracked(slot, [&]() -> pid_t {
    before = BootTicks::Now();
    spawned = VforkExec(req);
    after = BootTicks::Now();
    return spawned.pid;
  });
  if (spawned.pid <= 0) {
    return FailedPrecondition("spawn " + program + " in " + spec.cwd + ": " +
                              ErrnoText(spawned.error) + " (" + spawned.step + ")");
  }
  const pid_t pid = spawned.pid;
  SpawnedChild child;
  child.pid = pid;
  // From the clock around the spawn (no /proc read on the loop), else from /proc.
  child.start_time = StartTimeBetween(before, after).value_or(0);
  if (child.start_time == 0) child.start_time = ReadProcStartTime(pid);
  // A pidfd is always close-on-exec (pidfd_open(2)).
  child.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  child.stdin_fd = TakeFd(in.w);  // -1 with /dev/null
  child.stdout_fd = TakeFd(out.r);
  child.stderr_fd = TakeFd(err.r);
  if (spec.hold_output_ends) {
    child.stdout_hold = TakeFd(out.w);
    child.stderr_hold = TakeFd(err.w);
  }
  if (mode == PipeMode::kNonBlocking) {
    // A pipe's status flags are only its access mode, which F_SETFL ignores: no F_GETFL.
    for (int fd : {child.stdin_fd, child.stdout_fd, child.stderr_fd}) {
      if (fd >= 0) fcntl(fd, F_SETFL, O_NONBLOCK);
    }
  }
  return child;
}

}  // namespace conclave::exec
