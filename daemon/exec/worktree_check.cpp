#include "exec/worktree_check.h"

#include <filesystem>

namespace conclave::exec {
namespace fs = std::filesystem;

std::vector<std::string> UnpersistedClaims(CommandRunner& runner, const std::string& worktree,
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
  bool git = runner.Run({"git", "rev-parse", "--is-inside-work-tree"}, worktree, 5000).exit_code == 0;
  std::string status;
  if (git) {
    // One call for every claim: lines "XY path" for each changed, deleted or untracked file.
    std::vector<std::string> argv = {"git", "status", "--porcelain", "--untracked-files=all",
                                     "--no-renames", "--"};
    argv.insert(argv.end(), checked.begin(), checked.end());
    CommandResult r = runner.Run(argv, worktree, 10000);
    status = r.out;
    if (r.exit_code != 0) {
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
