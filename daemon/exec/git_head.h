// GitHead: the commit a repository's HEAD points at, read from the repository's files — no git
// process — so a dispatch can record its starting point cheaply at start. Finds the repository
// by walking up from a directory to a `.git` (a directory git would use, or a worktree's `.git`
// file naming its gitdir: a linked worktree's is <common>/worktrees/<id>, whose common dir holds
// the shared refs); follows HEAD's symbolic refs through loose ref files and packed-refs, each
// read beneath its git dir through no link (a worker writes the repository).
// Thread-safety: reads files only; any thread. Small reads (HEAD, a ref; packed-refs is
// scanned line by line until the ref is found), though a file held by a lease is waited for
// (kLeaseWaitMs): not for the daemon's loop.
#pragma once

#include <optional>
#include <string>

namespace conclave::exec {

struct GitHead {
  bool in_repo = false;  // a `.git` was found above the directory
  std::string commit;    // HEAD's commit (hex); empty when unborn or unreadable
  // A file on the way was held by a file lease whose holder did not let go within
  // kLeaseWaitMs: commit is empty (unknown), never a stale value read past the held file; and
  // in_repo is not known either when that file was a `.git` file.
  bool leased = false;
};

// How long one ReadGitHead waits in all for leases' holders to let go of its files (HEAD, a
// ref, packed-refs, a `.git` file), from the first it finds held. An open that must break a
// lease fails at once, non-blocking (EWOULDBLOCK), and starts the break; a holder that
// honours its SIGIO lets go in moments, and the kernel takes the lease away after
// fs.lease-break-time (45 s) whatever the holder does.
inline constexpr int kLeaseWaitMs = 500;

GitHead ReadGitHead(const std::string& dir);

// Whether a `.git` directory is one git would use (HEAD, objects and refs in it). Git passes
// over any other directory named `.git` and looks further up; so do the daemon's walks.
bool IsGitDirectory(const std::string& dir);

}  // namespace conclave::exec
