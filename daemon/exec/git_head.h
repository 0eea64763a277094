// GitHead: the commit a repository's HEAD points at, read from the repository's files — no git
// process — so a dispatch can record its starting point cheaply at start. Finds the repository
// by walking up from a directory to a `.git` (a directory git would use, or a worktree's `.git`
// file naming its gitdir: a linked worktree's is <common>/worktrees/<id>, whose common dir holds
// the shared refs); follows HEAD's symbolic refs through loose ref files and packed-refs, each
// read beneath its git dir through no link (a worker writes the repository).
// Thread-safety: reads files only; any thread. Small reads (HEAD, a ref; packed-refs is
// scanned line by line until the ref is found).
#pragma once

#include <optional>
#include <string>

namespace conclave::exec {

struct GitHead {
  bool in_repo = false;  // a `.git` was found above the directory
  std::string commit;    // HEAD's commit (hex); empty when unborn or unreadable
};

GitHead ReadGitHead(const std::string& dir);

// Whether a `.git` directory is one git would use (HEAD, objects and refs in it). Git passes
// over any other directory named `.git` and looks further up; so do the daemon's walks.
bool IsGitDirectory(const std::string& dir);

}  // namespace conclave::exec
