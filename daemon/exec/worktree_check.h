// Written ≠ persisted: checks a writer's claimed CHANGES against what the dispatch really
// changed. In a git repository a claimed file holds if it differs from the dispatch's starting
// point (the HEAD recorded when it started) in the working tree, the index or commits made
// since — or, with no starting point, if git status lists it. Claims may be relative to the
// terminal's cwd or to the repository root (a cwd in a subfolder); paths are read NUL-separated
// (-z), so spaces, quotes and non-ASCII names need no decoding. Outside a repository a claim
// holds if the file exists and was modified after the dispatch started; when git cannot run,
// or the repository the dispatch started in is not found, no claim holds. Git runs through a
// CommandRunner with short timeouts.
// Thread-safety: blocking (runs git): call it off the loop (the helper pool); any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/command_runner.h"

namespace conclave::exec {

// A file that already differed from HEAD when a writer's dispatch started: what it held then.
struct DirtyFile {
  bool exists = false;
  std::string sha256;     // of its content ("" when it does not exist or was not hashed)
  int64_t mtime_ms = -1;  // its modification time when it was read
};
// Repository-relative path → its state at the start.
using DirtyFiles = std::map<std::string, DirtyFile>;

// The files git lists as changed or untracked in cwd's repository, each hashed (at most
// kMaxDirtyFiles, files up to 16 MiB; bigger ones are left out and judged as before). Runs
// git: off the loop.
DirtyFiles SnapshotDirty(CommandRunner& runner, const std::string& cwd);

struct ClaimBasis {
  std::string cwd;         // the terminal's working directory
  std::string start_head;  // HEAD when the dispatch started ("" = unknown or unborn)
  int64_t started_ms = 0;  // when the dispatch started (unix ms)
  // Files already dirty at the start (SnapshotDirty, null = not known): such a file holds as
  // a claim only if it changed since — a file the dispatch never touched is not its work. An
  // entry read after the file was modified again (mtime after the start) is not used.
  std::shared_ptr<const DirtyFiles> dirty_at_start;
};

// Returns one line per claim that does not hold; empty when every claim holds.
std::vector<std::string> UnpersistedClaims(CommandRunner& runner, const ClaimBasis& basis,
                                           const std::vector<std::string>& files);

// The paths of a NUL-separated git listing (`--name-only -z`, or `status --porcelain -z`
// when `porcelain`: each entry "XY path").
std::vector<std::string> SplitGitZ(const std::string& out, bool porcelain);

}  // namespace conclave::exec
