#include "exec/command_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>

#include "exec/child_process.h"
#include "exec/child_registry.h"
#include "exec/sandbox.h"

extern char** environ;

namespace conclave::exec {

CommandResult ProcessCommandRunner::Run(const std::vector<std::string>& argv,
                                        const std::string& cwd, int timeout_ms) {
  return RunWithInput(argv, cwd, "", timeout_ms);
}

std::optional<std::vector<std::string>> GuardedGitArgv(const std::vector<std::string>& argv,
                                                       const std::string& cwd) {
  if (argv.empty() || argv[0] != "git") return argv;
  // Global options come before the subcommand: only there is -C a directory (diff -C is
  // copy detection).
  std::string dir = cwd;
  for (size_t i = 1; i < argv.size() && !argv[i].empty() && argv[i][0] == '-'; ++i) {
    if (argv[i] == "-c" || argv[i] == "--git-dir" || argv[i] == "--work-tree") {
      ++i;
    } else if (argv[i] == "-C" && i + 1 < argv.size()) {
      const std::string& c = argv[++i];
      dir = !c.empty() && c[0] == '/' ? c : dir + "/" + c;
    }
  }
  if (std::string why = PlantedGitRedirect(dir); !why.empty()) {
    spdlog::error("not running git in {}: {}", dir, why);
    return std::nullopt;
  }
  std::vector<std::string> out = argv;
  out.insert(out.begin() + 1,
             {"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c",
              "safe.bareRepository=explicit", "-c", "diff.ignoreSubmodules=all"});
  return out;
}

CommandResult ProcessCommandRunner::RunWithInput(const std::vector<std::string>& argv,
                                                 const std::string& cwd, const std::string& input,
                                                 int timeout_ms) {
  CommandResult r;
  // The repositories the daemon runs git in are writable by sandboxed workers.
  auto guarded = GuardedGitArgv(argv, cwd);
  if (!guarded) return r;
  SpawnSpec spec;
  spec.argv = std::move(*guarded);
  spec.cwd = cwd;
  for (char** e = environ; e && *e; ++e) spec.env.push_back(*e);
  if (FindOnPath(spec.argv[0], spec.env).empty()) {
    r.exit_code = 127;  // as a shell says it: not installed
    return r;
  }
  auto child = SpawnChild(spec);
  if (!child.ok()) return r;
  // Small inputs (an event) fit the pipe; a command that does not read them gets EOF/EPIPE.
  signal(SIGPIPE, SIG_IGN);
  for (size_t at = 0; at < input.size();) {
    ssize_t n = write(child->stdin_fd, input.data() + at, input.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += static_cast<size_t>(n);
  }
  close(child->stdin_fd);
  // stderr is read and dropped, never closed early: a helper writing to a closed pipe
  // (git's "Preparing worktree...") dies of SIGPIPE.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  int fds[2] = {child->stdout_fd, child->stderr_fd};
  while (fds[0] >= 0 || fds[1] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    pollfd p[2];
    nfds_t n_open = 0;
    for (int fd : fds) {
      if (fd >= 0) p[n_open++] = pollfd{fd, POLLIN, 0};
    }
    if (poll(p, n_open, static_cast<int>(left)) <= 0) continue;
    for (nfds_t i = 0; i < n_open; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n > 0) {
        if (p[i].fd == child->stdout_fd && r.out.size() < (1 << 20)) {
          r.out.append(buf, static_cast<size_t>(n));
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        for (int& fd : fds) {
          if (fd == p[i].fd) {
            close(fd);
            fd = -1;
          }
        }
      }
    }
  }
  bool eof = fds[0] < 0 && fds[1] < 0;
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  // The output ended, but the command may run on (a notifier that sent its output elsewhere
  // and hangs on the network): its exit is waited for only until the same deadline.
  bool in_time = eof;
  if (eof && child->pidfd >= 0) {
    in_time = false;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) break;
      pollfd p{child->pidfd, POLLIN, 0};
      int n = poll(&p, 1, static_cast<int>(left));
      if (n > 0) {
        in_time = true;
        break;
      }
      if (n < 0 && errno != EINTR) break;
    }
  }
  if (child->pidfd >= 0) close(child->pidfd);
  if (!in_time) kill(-child->pid, SIGKILL);
  int status = 0;
  pid_t reaped = WaitPid(child->pid, &status, 0);
  ChildRegistry::Instance().Untrack(child->pid);
  ChildRegistry::Instance().ReapOrphans();  // orphans that waited behind this child
  r.timed_out = !in_time;
  if (in_time && reaped == child->pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

}  // namespace conclave::exec
