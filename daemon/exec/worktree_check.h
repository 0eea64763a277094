// Written ≠ persisted: checks a writer's claimed CHANGES against the worktree. Each file must
// be a relative path inside the worktree that exists (or, in a git worktree, shows as
// changed or deleted against HEAD); in a git worktree an existing file must also differ from
// HEAD (modified or untracked). Runs git through a CommandRunner with a short timeout.
#pragma once

#include <string>
#include <vector>

#include "exec/command_runner.h"

namespace conclave::exec {

// Returns one line per claim that does not hold; empty when every claim holds. Blocking (runs
// git through `runner`): call it off the loop.
std::vector<std::string> UnpersistedClaims(CommandRunner& runner, const std::string& worktree,
                                           const std::vector<std::string>& files);

}  // namespace conclave::exec
