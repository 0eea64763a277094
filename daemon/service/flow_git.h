// Flow git work: the git commands a flow runs — make its worktree and branch, commit what the
// writer left, the diff under review, the fast-forward merge of --ship merge, removing the
// worktree. Each runs through the CommandRunner and blocks: call them on the helper pool,
// never on the loop. Each is idempotent, so a resumed flow may run it again safely.
// Thread-safety: free functions over a thread-safe CommandRunner; touch nothing else.
#pragma once

#include <string>

#include "common/status.h"
#include "exec/command_runner.h"

namespace conclave::service {

struct WorktreeMade {
  Status status;
  std::string base, base_sha;  // base resolved ("" asked = the repo's current branch)
};

// `git worktree add -b branch path base` (or re-attaches an existing branch / keeps an existing
// worktree of that branch at path).
WorktreeMade MakeFlowWorktree(exec::CommandRunner& git, const std::string& repo,
                              const std::string& base, const std::string& branch,
                              const std::string& path);

// Commits everything left uncommitted in the worktree (explicit author, no git identity needed)
// and returns HEAD's sha.
StatusOr<std::string> CommitLeftovers(exec::CommandRunner& git, const std::string& worktree,
                                      const std::string& message);

// `git diff base_sha...HEAD` in the worktree.
StatusOr<std::string> FlowDiff(exec::CommandRunner& git, const std::string& worktree,
                               const std::string& base_sha);

struct ShipResult {
  bool merged = false;
  std::string note;  // what happened, or why not
};

// Fast-forwards base to branch in the repository when base is checked out there, the tree is
// clean and base has not moved since the flow began (base_sha). Already merged counts as merged.
ShipResult ShipMerge(exec::CommandRunner& git, const std::string& repo, const std::string& base,
                     const std::string& base_sha, const std::string& branch);

// Removes the worktree; deletes the branch only when it is merged (`git branch -d`).
std::string RemoveFlowWorktree(exec::CommandRunner& git, const std::string& repo,
                               const std::string& path, const std::string& branch);

}  // namespace conclave::service
