// Benchmark: worker spawn rate of exec::SpawnChild (a CLONE_VFORK clone, exec/vfork_exec) against
// plain fork+exec and Boost.Process v1 (Boost 1.74, the stack's version), with the parent holding a
// large resident heap — the daemon grows, spawning must not slow down with it; the helper commands
// (git, version probes) run through exec::ProcessCommandRunner. Prints figures; asserts nothing
// (speed is measured, not tested).
//   spawn_bench [heap_mib=1024] [spawns=200]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

}  // namespace

int main(int argc, char** argv) {
  size_t heap_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
  int n = argc > 2 ? std::atoi(argv[2]) : 200;
  std::vector<char> heap(heap_mib << 20);
  for (size_t i = 0; i < heap.size(); i += 4096) heap[i] = 1;  // make it resident

  conclave::exec::SpawnSpec spec;
  spec.argv = {"/bin/true"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    auto c = conclave::exec::SpawnChild(spec);
    if (!c.ok()) {
      std::fprintf(stderr, "spawn failed: %s\n", c.status().message().c_str());
      return 1;
    }
    close(c->stdin_fd);
    close(c->stdout_fd);
    close(c->stderr_fd);
    if (c->pidfd >= 0) close(c->pidfd);
    Reap(c->pid);
  }
  auto spawn_time = std::chrono::steady_clock::now() - t0;

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
  std::printf("fork + exec:                    %8.1f spawns/s\n", Rate(n, fork_time));
  std::printf("Boost.Process v1 child+wait:    %8.1f spawns/s\n", Rate(n, bp_time));
  std::printf("ProcessCommandRunner (helpers): %8.1f runs/s\n", Rate(n, runner_time));
  return 0;
}
