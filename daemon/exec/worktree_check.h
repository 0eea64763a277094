// Written ≠ persisted: checks a writer's claimed CHANGES against what the dispatch really
// changed. In a git repository a claimed file holds if it differs from the dispatch's starting
// point (the HEAD recorded when it started) in the working tree, the index or commits made
// since — or, with no starting point, if git status lists it. Claims may be relative to the
// terminal's cwd or to the repository root (a cwd in a subfolder); paths are read NUL-separated
// (-z), so spaces, quotes and non-ASCII names need no decoding. Outside a repository a claim
// holds if the file exists and was modified after the dispatch started. Git runs through a
// CommandRunner with short timeouts.
// Thread-safety: blocking (runs git): call it off the loop (the helper pool); any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/command_runner.h"

namespace conclave::exec {

struct ClaimBasis {
  std::string cwd;         // the terminal's working directory
  std::string start_head;  // HEAD when the dispatch started ("" = unknown or unborn)
  int64_t started_ms = 0;  // when the dispatch started (unix ms)
};

// Returns one line per claim that does not hold; empty when every claim holds.
std::vector<std::string> UnpersistedClaims(CommandRunner& runner, const ClaimBasis& basis,
                                           const std::vector<std::string>& files);

// The paths of a NUL-separated git listing (`--name-only -z`, or `status --porcelain -z`
// when `porcelain`: each entry "XY path").
std::vector<std::string> SplitGitZ(const std::string& out, bool porcelain);

}  // namespace conclave::exec
