#include "exec/child_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/runtime.h"
#include "exec/child_registry.h"
#include "exec/proc_info.h"

namespace conclave::exec {
namespace {

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
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos
                                                                   : colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

StatusOr<SpawnedChild> SpawnChild(const SpawnSpec& spec, PipeMode mode) {
  if (spec.argv.empty()) return InvalidArgument("command: empty argv");
  std::string program = FindOnPath(spec.argv[0], spec.env);
  if (program.empty()) {
    return FailedPrecondition("spawn: program '" + spec.argv[0] + "' not found on PATH");
  }
  Pipe in, out, err;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
  in.r = fds[0], in.w = fds[1];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
  out.r = fds[0], out.w = fds[1];
  if (pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe: " + ErrnoText(errno));
  err.r = fds[0], err.w = fds[1];

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.r, 0);
  posix_spawn_file_actions_adddup2(&actions, out.w, 1);
  posix_spawn_file_actions_adddup2(&actions, err.w, 2);
  // The child keeps only 0-2: nothing the daemon holds (sockets, the database) leaks into it.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                POSIX_SPAWN_USEVFORK;
  if (InBackgroundThread()) {
    // A helper thread's SCHED_BATCH (common/runtime.h) is the daemon's own: not the child's.
    sched_param normal{};
    posix_spawnattr_setschedpolicy(&attr, SCHED_OTHER);
    posix_spawnattr_setschedparam(&attr, &normal);
    flags |= POSIX_SPAWN_SETSCHEDULER;
  }
  posix_spawnattr_setflags(&attr, flags);

  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  int rc = 0;
  // Spawned and registered under one lock: the orphan sweep never reaps a child it does not own.
  BootTicks before, after;
  ChildRegistry::Instance().SpawnTracked([&]() -> pid_t {
    before = BootTicks::Now();
    rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    after = BootTicks::Now();
    return rc == 0 ? pid : -1;
  });
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return FailedPrecondition("spawn " + program + " in " + spec.cwd + ": " + ErrnoText(rc));
  }
  SpawnedChild child;
  child.pid = pid;
  // From the clock around the spawn (no /proc read on the loop), else from /proc.
  child.start_time = StartTimeBetween(before, after).value_or(0);
  if (child.start_time == 0) child.start_time = ReadProcStartTime(pid);
  // A pidfd is always close-on-exec (pidfd_open(2)).
  child.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  child.stdin_fd = TakeFd(in.w);
  child.stdout_fd = TakeFd(out.r);
  child.stderr_fd = TakeFd(err.r);
  if (mode == PipeMode::kNonBlocking) {
    for (int fd : {child.stdin_fd, child.stdout_fd, child.stderr_fd}) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
  }
  return child;
}

}  // namespace conclave::exec
