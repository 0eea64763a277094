// Benchmark: worker spawn rate of exec::SpawnChild (a CLONE_VFORK clone, exec/vfork_exec) against
// plain fork+exec and Boost.Process v1 (Boost 1.74, the stack's version), with the parent holding a
// large resident heap — the daemon grows, spawning must not slow down with it; the helper commands
// (git, version probes) run through exec::ProcessCommandRunner. Prints figures; asserts nothing
// (speed is measured, not tested).
//   spawn_bench [heap_mib=1024] [spawns=200]
// It also prints the calling thread's CPU per spawn of SpawnChild against glibc's posix_spawn
// with the same pipes and attributes (what SpawnChild used before exec/vfork_exec).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <boost/process.hpp>

#include "exec/child_process.h"
#include "exec/command_runner.h"

namespace {

double Rate(int n, std::chrono::steady_clock::duration d) {
  return n / std::chrono::duration<double>(d).count();
}

void Reap(pid_t pid) {
  int st;
  waitpid(pid, &st, 0);
}

// The calling thread's CPU time (user + system), in µs.
double ThreadCpuUs() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

bool SpawnOnce(const conclave::exec::SpawnSpec& spec) {
  auto c = conclave::exec::SpawnChild(spec);
  if (!c.ok()) {
    std::fprintf(stderr, "spawn failed: %s\n", c.status().message().c_str());
    return false;
  }
  for (int fd : {c->stdin_fd, c->stdout_fd, c->stderr_fd, c->pidfd}) {
    if (fd >= 0) close(fd);
  }
  Reap(c->pid);
  return true;
}

// What SpawnChild asked of glibc before exec/vfork_exec: the same pipes, file actions and
// attributes through posix_spawn (which maps and unmaps a stack for each child).
void GlibcSpawnOnce() {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) std::abort();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawn_file_actions_addchdir_np(&actions, "/");
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_USEVFORK);
  char prog[] = "/bin/true";
  char* args[] = {prog, nullptr};
  char path[] = "PATH=/usr/bin:/bin";
  char* env[] = {path, nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, prog, &actions, &attr, args, env) != 0) std::abort();
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) close(pidfd);
  Reap(pid);
}

}  // namespace

int main(int argc, char** argv) {
  size_t heap_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
  int n = argc > 2 ? std::atoi(argv[2]) : 200;
  if (n <= 0) n = 200;
  std::vector<char> heap(heap_mib << 20);
  for (size_t i = 0; i < heap.size(); i += 4096) heap[i] = 1;  // make it resident

  conclave::exec::SpawnSpec spec;
  spec.argv = {"/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (!SpawnOnce(spec)) return 1;
  }
  auto spawn_time = std::chrono::steady_clock::now() - t0;

  // The caller's CPU per spawn, SpawnChild against glibc's posix_spawn, in alternating chunks
  // so both see the same phases of the host, beside a second thread woken after every spawn as
  // the daemon's gRPC threads are per request (so the process runs on the other CPU too, whose
  // TLB an unmap must then flush). It ends when the pipe's write end closes.
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) return 1;
  std::thread other([r = wake[0]] {
    char byte;
    while (read(r, &byte, 1) == 1) {
    }
  });
  auto poke = [w = wake[1]] { (void)!write(w, "x", 1); };
  auto finish = [&] {
    close(wake[1]);
    other.join();
    close(wake[0]);
  };
  double ours_us = 0, glibc_us = 0;
  const int chunk = n / 10 > 0 ? n / 10 : 1;
  for (int done = 0; done < n; done += chunk) {
    double a = ThreadCpuUs();
    bool ok = true;
    for (int i = 0; i < chunk && ok; ++i) {
      ok = SpawnOnce(spec);
      poke();
    }
    if (!ok) {
      finish();
      return 1;
    }
    double b = ThreadCpuUs();
    for (int i = 0; i < chunk; ++i) {
      GlibcSpawnOnce();
      poke();
    }
    glibc_us += ThreadCpuUs() - b;
    ours_us += b - a;
  }
  finish();
  const int timed = (n + chunk - 1) / chunk * chunk;

  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/true", "true", static_cast<char*>(nullptr));
      _exit(127);
    }
    Reap(pid);
  }
  auto fork_time = std::chrono::steady_clock::now() - t0;

  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    boost::process::child c("/bin/true");
    c.wait();
  }
  auto bp_time = std::chrono::steady_clock::now() - t0;

  conclave::exec::ProcessCommandRunner runner;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) runner.Run({"/bin/true"}, "/", 5000);
  auto runner_time = std::chrono::steady_clock::now() - t0;

  std::printf("parent heap %zu MiB, %d spawns each\n", heap_mib, n);
  std::printf("SpawnChild (vfork clone):       %8.1f spawns/s\n", Rate(n, spawn_time));
  std::printf("caller's CPU per spawn, SpawnChild %.1f µs, glibc posix_spawn %.1f µs\n",
              ours_us / timed, glibc_us / timed);
  std::printf("fork + exec:                    %8.1f spawns/s\n", Rate(n, fork_time));
  std::printf("Boost.Process v1 child+wait:    %8.1f spawns/s\n", Rate(n, bp_time));
  std::printf("ProcessCommandRunner (helpers): %8.1f runs/s\n", Rate(n, runner_time));
  return 0;
}
