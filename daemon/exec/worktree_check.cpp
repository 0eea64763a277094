#include "exec/worktree_check.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "exec/child_process.h"

extern char** environ;

namespace conclave::exec {
namespace fs = std::filesystem;

int RunSync(const std::vector<std::string>& argv, const std::string& cwd, std::string* out,
            int timeout_ms) {
  SpawnSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  for (char** e = environ; e && *e; ++e) spec.env.push_back(*e);
  auto child = SpawnChild(spec);
  if (!child.ok()) return -1;
  close(child->stdin_fd);
  close(child->stderr_fd);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  bool eof = false;
  while (!eof) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    pollfd p{child->stdout_fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    ssize_t n = read(child->stdout_fd, buf, sizeof buf);
    if (n > 0) {
      if (out && out->size() < (1 << 20)) out->append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      eof = true;
    }
  }
  close(child->stdout_fd);
  if (child->pidfd >= 0) close(child->pidfd);
  if (!eof) kill(-child->pid, SIGKILL);
  int status = 0;
  waitpid(child->pid, &status, 0);
  if (!eof) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> UnpersistedClaims(const std::string& worktree,
                                           const std::vector<std::string>& files) {
  constexpr size_t kMaxClaims = 200;
  std::vector<std::string> problems;
  std::vector<std::string> checked;
  for (const auto& f : files) {
    fs::path p(f);
    if (p.is_absolute() || f.find("..") != std::string::npos) {
      problems.push_back(f + ": not a path inside the worktree");
    } else if (checked.size() < kMaxClaims) {
      checked.push_back(f);
    }
  }
  if (checked.empty()) return problems;
  std::string probe;
  bool git = RunSync({"git", "rev-parse", "--is-inside-work-tree"}, worktree, &probe, 5000) == 0;
  std::string status;
  if (git) {
    // One call for every claim: lines "XY path" for each changed, deleted or untracked file.
    std::vector<std::string> argv = {"git", "status", "--porcelain", "--untracked-files=all",
                                     "--no-renames", "--"};
    argv.insert(argv.end(), checked.begin(), checked.end());
    if (RunSync(argv, worktree, &status, 10000) != 0) {
      problems.push_back("git status failed in " + worktree);
      return problems;
    }
  }
  for (const auto& f : checked) {
    bool exists = fs::exists(fs::path(worktree) / f);
    if (!git) {
      if (!exists) problems.push_back(f + ": claimed as changed but does not exist");
      continue;
    }
    bool listed = status.find(" " + f + "\n") != std::string::npos ||
                  status.find(" \"" + f + "\"\n") != std::string::npos;
    if (!listed) {
      problems.push_back(f + (exists ? ": claimed as changed but identical to git HEAD"
                                     : ": claimed as changed but does not exist"));
    }
  }
  return problems;
}

}  // namespace conclave::exec
