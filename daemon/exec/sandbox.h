// Sandbox: the bubblewrap (bwrap) command line that runs one worker with the filesystem
// read-only except its working directory (and, in a git worktree, what a commit writes), its
// dispatch directory (but not the files the daemon writes there and reads back, e.g. the
// stdout.log its result is parsed from) and a private /tmp; with the daemon's state directory, the directory of
// its socket and of its config file not visible — only the dispatch's own socket is bound in,
// at the path of the daemon's, so the worker reaches the API with a worker's rights (the daemon
// knows it by the socket it came through) and nothing else of the daemon's. In its own pid namespace (it cannot
// see the daemon through /proc/<pid>/root), session, IPC and UTS namespaces; it dies with the
// daemon. Signalling the outer bwrap's process group ends the whole namespace.
// BwrapArgv is pure; FindGitDirs and ResolveSandboxPaths read the filesystem (small reads of
// .git files, realpath) and run where PrepareLaunch runs. Thread-safety: no shared state.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace conclave::exec {

// The git directories a commit from `cwd` writes to: "" when cwd is not in a git worktree.
struct GitDirs {
  std::string git_dir;     // the worktree's own (.git, or <common>/worktrees/<name>)
  std::string common_dir;  // objects, refs, logs (== git_dir in the main worktree)
  std::string dot_git;     // the .git found (a directory, or a linked worktree's file)
  std::string top;         // the directory holding it (the worktree's top)
  std::string refused;     // why none of it may be used (a .git that is a symbolic link)
};

// Walks up from cwd to the first .git (a directory git would use, or a file "gitdir: PATH"; a
// directory named .git that is not a repository is passed over, as git does); a file's
// gitdir may name its common dir in <git_dir>/commondir. A .git directory is always its own
// common dir: a main repository never has a commondir file, and one there was planted (it
// would point every git run at a config of the planter's choosing).
GitDirs FindGitDirs(const std::string& cwd);

// Why the daemon must not run git in dir ("" when it may): a .git directory at or above dir
// holding a commondir file — a redirect a worker could plant from inside the sandbox, where
// the .git directory is writable — would make git read a config that runs code.
std::string PlantedGitRedirect(const std::string& dir);

struct SandboxPaths {
  std::string cwd;           // read-write; the worker starts here
  std::string dispatch_dir;  // read-write
  std::string socket;        // the daemon's unix socket, bound at the same path ("" for none)
  // When set, bound at `socket` instead: the dispatch's own socket (worker rights only), so
  // the daemon's socket is not reachable from inside at all.
  std::string socket_source;
  std::string home;          // the worker's real HOME when it is not isolated, "" otherwise
  std::string state_dir;     // hidden
  std::string config_file;   // its directory hidden ("" when the daemon has no config file)
  // The user's runtime directory (XDG_RUNTIME_DIR, /run/user/UID), hidden: its sockets (the
  // session bus, systemd's) would let a worker start a process outside the sandbox.
  std::vector<std::string> runtime_dirs;
  std::vector<std::string> readonly;  // bound read-only at the same path (home_files)
  GitDirs git;
  // Everything read-only and no network: the sandbox the daemon's own git runs in for a
  // sandboxed terminal (ConfinedRunner), so a config or attributes file a worker planted
  // cannot make it run anything with more rights than the worker had. The cwd and the git
  // directories stay visible (read-only) under hidden parents such as /tmp.
  bool read_only = false;
};

// `bwrap ... -- command...`. Mounts are applied from the shallowest path to the deepest, so the
// most specific rule wins: the state dir is hidden, the dispatch dir inside it bound back; the
// cwd is writable, the repository's hooks and config inside it read-only. A hidden directory
// that contains the worker's HOME, or is "/", is not hidden (that would hide everything).
std::vector<std::string> BwrapArgv(const SandboxPaths& paths,
                                   const std::vector<std::string>& command);

// Makes every path absolute and symlink-free (bwrap binds must name real directories) and
// finds the git directories of cwd; drops hidden paths that do not exist. FailedPrecondition
// when the cwd is inside the state directory (outside the dispatch directory): the worker
// would see the daemon's state through it; and when the git directories are not ones git
// made for this directory (a .git a worker wrote may name any directory: a hidden one, or
// another repository's) — they would be bound writable.
Status ResolveSandboxPaths(SandboxPaths& paths);

}  // namespace conclave::exec
