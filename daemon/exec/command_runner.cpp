#include "exec/command_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "exec/child_process.h"
#include "exec/child_registry.h"

extern char** environ;

namespace conclave::exec {

CommandResult ProcessCommandRunner::Run(const std::vector<std::string>& argv,
                                        const std::string& cwd, int timeout_ms) {
  CommandResult r;
  SpawnSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  for (char** e = environ; e && *e; ++e) spec.env.push_back(*e);
  auto child = SpawnChild(spec);
  if (!child.ok()) return r;
  close(child->stdin_fd);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  bool eof = false, err_eof = false;
  // stderr is read and dropped: a closed pipe would kill a chatty command (git worktree add
  // reports on stderr) with SIGPIPE.
  while (!eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    pollfd p[2] = {{child->stdout_fd, POLLIN, 0}, {err_eof ? -1 : child->stderr_fd, POLLIN, 0}};
    if (poll(p, 2, static_cast<int>(left)) <= 0) continue;
    if (p[1].revents) {
      ssize_t e = read(child->stderr_fd, buf, sizeof buf);
      if (e == 0 || (e < 0 && errno != EAGAIN && errno != EINTR)) err_eof = true;
    }
    if (!p[0].revents) continue;
    ssize_t n = read(child->stdout_fd, buf, sizeof buf);
    if (n > 0) {
      if (r.out.size() < (1 << 20)) r.out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      eof = true;
    }
  }
  close(child->stdout_fd);
  close(child->stderr_fd);
  if (child->pidfd >= 0) close(child->pidfd);
  if (!eof) kill(-child->pid, SIGKILL);
  int status = 0;
  pid_t reaped = WaitPid(child->pid, &status, 0);
  ChildRegistry::Instance().Untrack(child->pid);
  r.timed_out = !eof;
  if (eof && reaped == child->pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

}  // namespace conclave::exec
