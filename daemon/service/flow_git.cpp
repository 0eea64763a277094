#include "service/flow_git.h"

#include <filesystem>
#include <sstream>

namespace conclave::service {
namespace {
namespace fs = std::filesystem;
constexpr int kGitTimeoutMs = 120000;

exec::CommandResult Git(exec::CommandRunner& git, const std::string& dir,
                        std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  return git.Run(argv, dir, kGitTimeoutMs);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Sha(exec::CommandRunner& git, const std::string& dir, const std::string& ref) {
  auto r = Git(git, dir, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"});
  return r.exit_code == 0 ? Trim(r.out) : "";
}

}  // namespace

WorktreeMade MakeFlowWorktree(exec::CommandRunner& git, const std::string& repo,
                              const std::string& base, const std::string& branch,
                              const std::string& path) {
  WorktreeMade m;
  m.base = base;
  if (m.base.empty()) {
    auto r = Git(git, repo, {"symbolic-ref", "--short", "-q", "HEAD"});
    m.base = Trim(r.out);
    if (r.exit_code != 0 || m.base.empty()) {
      m.status = FailedPrecondition("base: the repository " + repo +
                                    " has no current branch (detached HEAD); pass --base");
      return m;
    }
  }
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string existing = Sha(git, repo, "refs/heads/" + branch);
  if (fs::exists(path + "/.git")) {
    // Made before a restart: keep it when it is this flow's branch.
    auto r = Git(git, path, {"symbolic-ref", "--short", "-q", "HEAD"});
    if (Trim(r.out) != branch) {
      m.status = FailedPrecondition("worktree: " + path + " exists and is not on " + branch);
      return m;
    }
  } else if (!existing.empty()) {
    if (Git(git, repo, {"worktree", "add", path, branch}).exit_code != 0) {
      m.status = Internal("worktree: git worktree add " + path + " " + branch + " failed");
      return m;
    }
  } else {
    if (Sha(git, repo, m.base).empty()) {
      m.status = InvalidArgument("base: '" + m.base + "' is not a commit in " + repo);
      return m;
    }
    if (Git(git, repo, {"worktree", "add", "-b", branch, path, m.base}).exit_code != 0) {
      m.status = Internal("worktree: git worktree add -b " + branch + " " + path + " " + m.base +
                          " failed");
      return m;
    }
  }
  // The fork point: base as it was when the branch was made.
  auto mb = Git(git, path, {"merge-base", m.base, "HEAD"});
  m.base_sha = Trim(mb.out);
  if (mb.exit_code != 0 || m.base_sha.empty()) {
    m.status = Internal("worktree: cannot find where " + branch + " forks from " + m.base);
  }
  return m;
}

StatusOr<std::string> CommitLeftovers(exec::CommandRunner& git, const std::string& worktree,
                                      const std::string& message) {
  if (Git(git, worktree, {"add", "-A"}).exit_code != 0) {
    return Internal("commit: git add -A failed in " + worktree);
  }
  auto status = Git(git, worktree, {"status", "--porcelain"});
  if (status.exit_code != 0) return Internal("commit: git status failed in " + worktree);
  if (!Trim(status.out).empty()) {
    auto c = Git(git, worktree,
                 {"-c", "user.name=Conclave", "-c", "user.email=conclave@localhost", "-c",
                  "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", message});
    if (c.exit_code != 0) return Internal("commit: git commit failed in " + worktree);
  }
  std::string head = Sha(git, worktree, "HEAD");
  if (head.empty()) return Internal("commit: cannot read HEAD in " + worktree);
  return head;
}

StatusOr<std::string> FlowDiff(exec::CommandRunner& git, const std::string& worktree,
                               const std::string& base_sha) {
  auto r = Git(git, worktree, {"diff", base_sha + "...HEAD"});
  if (r.exit_code != 0) return Internal("review: git diff " + base_sha + "...HEAD failed");
  return r.out;
}

ShipResult ShipMerge(exec::CommandRunner& git, const std::string& repo, const std::string& base,
                     const std::string& base_sha, const std::string& branch) {
  ShipResult s;
  std::string head = Sha(git, repo, "refs/heads/" + branch);
  std::string now = Sha(git, repo, "refs/heads/" + base);
  if (!head.empty() && now == head) {
    s.merged = true;
    s.note = base + " already at " + branch;
    return s;
  }
  // The worktree of the repository that has base checked out: the main one or a linked one.
  std::string where;
  {
    auto list = Git(git, repo, {"worktree", "list", "--porcelain"});
    std::string path;
    std::istringstream in(list.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("worktree ", 0) == 0) path = line.substr(9);
      if (line == "branch refs/heads/" + base && where.empty()) where = path;
    }
  }
  if (where.empty()) {
    s.note = "not merged: no worktree of " + repo + " has " + base + " checked out";
  } else if (now != base_sha) {
    s.note = "not merged: " + base + " moved since the flow began (" + base_sha.substr(0, 12) +
             " → " + now.substr(0, 12) + ")";
  } else if (!Trim(Git(git, where, {"status", "--porcelain", "--untracked-files=no"}).out).empty()) {
    s.note = "not merged: the working tree of " + where + " is not clean";
  } else if (Git(git, where, {"merge", "--ff-only", "-q", branch}).exit_code != 0) {
    s.note = "not merged: git merge --ff-only " + branch + " in " + where + " failed";
  } else {
    s.merged = true;
    s.note = "merged: " + base + " fast-forwarded to " + branch + " in " + where;
  }
  return s;
}

std::string RemoveFlowWorktree(exec::CommandRunner& git, const std::string& repo,
                               const std::string& path, const std::string& branch) {
  std::string note;
  std::error_code ec;  // on the helpers' thread: an exception there would end the daemon
  if (!path.empty() && fs::exists(path, ec)) {
    if (Git(git, repo, {"worktree", "remove", "--force", path}).exit_code != 0) {
      return "could not remove the worktree " + path;
    }
    note = "removed " + path;
  }
  Git(git, repo, {"worktree", "prune"});
  if (!branch.empty() && Git(git, repo, {"branch", "-d", "-q", branch}).exit_code == 0) {
    note += (note.empty() ? "" : "; ") + std::string("deleted the merged branch ") + branch;
  } else if (!branch.empty()) {
    note += (note.empty() ? "" : "; ") + std::string("kept the branch ") + branch;
  }
  return note;
}

}  // namespace conclave::service
