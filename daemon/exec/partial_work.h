// What an attempt that ended early left in a repository: `git diff --stat` of the working
// tree against the commit the attempt started from (committed, staged and unstaged changes)
// and the untracked files, bounded. Runs git through the CommandRunner: call it off the loop.
#pragma once

#include <string>

#include "exec/command_runner.h"

namespace conclave::exec {

// "" when base is empty or git fails (not a repository, unknown commit); otherwise the stat
// lines (at most 60), "untracked: PATH" lines (at most 30), or "(no changes)".
std::string DescribePartialWork(CommandRunner& commands, const std::string& cwd,
                                const std::string& base);

}  // namespace conclave::exec
