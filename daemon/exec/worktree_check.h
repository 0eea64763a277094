// Written ≠ persisted: checks a writer's claimed CHANGES against the worktree. Each file must
// be a relative path inside the worktree that exists (or, in a git worktree, shows as
// changed or deleted against HEAD); in a git worktree an existing file must also differ from
// HEAD (modified or untracked). Runs git synchronously with a short timeout.
#pragma once

#include <string>
#include <vector>

namespace conclave::exec {

// Returns one line per claim that does not hold; empty when every claim holds.
std::vector<std::string> UnpersistedClaims(const std::string& worktree,
                                           const std::vector<std::string>& files);

// Runs argv in cwd, returns exit code (-1 on spawn failure or timeout) and stdout (≤ 1 MiB).
int RunSync(const std::vector<std::string>& argv, const std::string& cwd, std::string* out,
            int timeout_ms);

}  // namespace conclave::exec
