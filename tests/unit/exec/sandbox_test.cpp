// exec/sandbox: the bwrap command line (mount order decides what a worker sees) and the git
// directories a commit needs.
#include "exec/sandbox.h"

#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "in_child.h"

using namespace conclave::exec;
namespace fs = std::filesystem;

namespace {

// Position of the mount "<flag> ... <path>" whose destination is path (-1 when absent).
long MountAt(const std::vector<std::string>& argv, const std::string& flag, const std::string& path) {
  auto end = std::find(argv.begin(), argv.end(), "--");
  for (auto it = argv.begin(); it != end; ++it) {
    if (*it != flag) continue;
    bool two = flag == "--tmpfs";
    auto dest = it + (two ? 1 : 2);
    if (dest < end && *dest == path) return it - argv.begin();
  }
  return -1;
}

SandboxPaths Paths() {
  SandboxPaths p;
  p.cwd = "/home/u/proj/wt";
  p.dispatch_dir = "/home/u/.local/state/conclave/dispatches/7";
  p.state_dir = "/home/u/.local/state/conclave";
  p.socket = "/run/user/1000/conclave/conclave.sock";
  p.home = "/home/u";
  p.config_file = "/home/u/.config/conclave/config.json";
  p.git = {"/home/u/proj/repo/.git/worktrees/wt", "/home/u/proj/repo/.git",
           "/home/u/proj/wt/.git", "/home/u/proj/wt"};
  return p;
}

}  // namespace

TEST_CASE("bwrap: the state dir is hidden and the dispatch dir bound back inside it",
          "[sandbox]") {
  auto argv = BwrapArgv(Paths(), {"claude", "-p"});
  REQUIRE(argv.front() == "bwrap");
  long hide = MountAt(argv, "--tmpfs", "/home/u/.local/state/conclave");
  long back = MountAt(argv, "--bind", "/home/u/.local/state/conclave/dispatches/7");
  REQUIRE(hide > 0);
  REQUIRE(back > hide);
  // The socket's and the config's directories are hidden, the socket bound back.
  long sock_dir = MountAt(argv, "--tmpfs", "/run/user/1000/conclave");
  long sock = MountAt(argv, "--bind", "/run/user/1000/conclave/conclave.sock");
  CHECK(sock_dir > 0);
  CHECK(sock > sock_dir);
  CHECK(MountAt(argv, "--tmpfs", "/home/u/.config/conclave") > 0);
  CHECK(MountAt(argv, "--tmpfs", "/tmp") > 0);
  for (const char* f : {"--unshare-pid", "--die-with-parent", "--new-session"}) {
    CHECK(std::find(argv.begin(), argv.end(), f) != argv.end());
  }
  // The command follows "--", unchanged, after --chdir to the cwd.
  auto dash = std::find(argv.begin(), argv.end(), "--");
  REQUIRE(dash != argv.end());
  CHECK(std::vector<std::string>(dash + 1, argv.end()) == std::vector<std::string>{"claude", "-p"});
  CHECK(*(dash - 2) == "--chdir");
  CHECK(*(dash - 1) == "/home/u/proj/wt");
}

TEST_CASE("bwrap: the dispatch's own socket is bound where the daemon's socket would be",
          "[sandbox]") {
  SandboxPaths p = Paths();
  p.socket_source = "/home/u/.local/state/conclave/sockets/d7.sock";
  auto argv = BwrapArgv(p, {"claude"});
  long sock = MountAt(argv, "--bind", "/run/user/1000/conclave/conclave.sock");
  REQUIRE(sock > 0);
  CHECK(argv[sock + 1] == "/home/u/.local/state/conclave/sockets/d7.sock");
  CHECK(sock > MountAt(argv, "--tmpfs", "/run/user/1000/conclave"));
  // The daemon's own socket is bound nowhere (only its path is used as the destination).
  CHECK(std::count(argv.begin(), argv.end(), "/run/user/1000/conclave/conclave.sock") == 1);
  // The sockets directory itself stays hidden with the state dir.
  CHECK(MountAt(argv, "--bind", "/home/u/.local/state/conclave/sockets") < 0);
}

TEST_CASE("bwrap: a linked worktree's commit dirs are writable, hooks and config are not",
          "[sandbox]") {
  auto argv = BwrapArgv(Paths(), {"x"});
  std::string common = "/home/u/proj/repo/.git";
  long ro_common = MountAt(argv, "--ro-bind-try", common);
  REQUIRE(ro_common > 0);
  for (const char* sub : {"/objects", "/refs", "/logs"}) {
    INFO(sub);
    CHECK(MountAt(argv, "--bind-try", common + sub) > ro_common);
  }
  CHECK(MountAt(argv, "--bind", common + "/worktrees/wt") > ro_common);
  CHECK(MountAt(argv, "--ro-bind-try", common + "/hooks") > ro_common);
  CHECK(MountAt(argv, "--ro-bind-try", common + "/config") > ro_common);
  long cwd = MountAt(argv, "--bind", "/home/u/proj/wt");
  CHECK(cwd > 0);
  // What ties the worktree to its repository is not the worker's to rewrite.
  long own = MountAt(argv, "--bind", common + "/worktrees/wt");
  CHECK(MountAt(argv, "--ro-bind-try", common + "/worktrees/wt/commondir") > own);
  CHECK(MountAt(argv, "--ro-bind-try", common + "/worktrees/wt/gitdir") > own);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/wt/.git") > cwd);
}

TEST_CASE("bwrap: the user's runtime directory is hidden, the dispatch's socket bound inside it",
          "[sandbox]") {
  SandboxPaths p = Paths();
  p.runtime_dirs = {"/run/user/1000"};
  auto argv = BwrapArgv(p, {"x"});
  long hide = MountAt(argv, "--tmpfs", "/run/user/1000");
  REQUIRE(hide > 0);
  CHECK(MountAt(argv, "--bind", "/run/user/1000/conclave/conclave.sock") > hide);
  p.cwd = "/run/user/1000/work";  // a worktree there stays visible
  CHECK(MountAt(BwrapArgv(p, {"x"}), "--tmpfs", "/run/user/1000") < 0);
}

TEST_CASE("bwrap: a main worktree's .git is writable but its hooks and config stay read-only",
          "[sandbox]") {
  SandboxPaths p = Paths();
  p.cwd = "/home/u/proj/repo/src";
  p.git = {"/home/u/proj/repo/.git", "/home/u/proj/repo/.git", "/home/u/proj/repo/.git",
           "/home/u/proj/repo"};
  auto argv = BwrapArgv(p, {"x"});
  long rw = MountAt(argv, "--bind", "/home/u/proj/repo/.git");
  REQUIRE(rw > 0);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/repo/.git") < 0);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/repo/.git/hooks") > rw);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/repo/.git/config") > rw);
}

TEST_CASE("bwrap: a directory holding HOME is never hidden — the config file is, alone",
          "[sandbox]") {
  SandboxPaths p = Paths();
  p.config_file = "/home/u/conclave.json";
  p.socket = "/home/u/conclave.sock";
  auto argv = BwrapArgv(p, {"x"});
  CHECK(MountAt(argv, "--tmpfs", "/home/u") < 0);
  CHECK(MountAt(argv, "--ro-bind", "/home/u/conclave.json") > 0);
  CHECK(MountAt(argv, "--bind", "/home/u/conclave.sock") > 0);
}

TEST_CASE("bwrap: the cwd's parent may be hidden — the cwd is bound after it", "[sandbox]") {
  SandboxPaths p = Paths();
  p.socket = "/home/u/proj/conclave.sock";  // the socket's directory holds the worktree
  auto argv = BwrapArgv(p, {"x"});
  long hide = MountAt(argv, "--tmpfs", "/home/u/proj");
  REQUIRE(hide > 0);
  CHECK(MountAt(argv, "--bind", "/home/u/proj/wt") > hide);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/repo/.git") > hide);
}

// What git requires of a .git directory before it takes it for a repository.
static void MakeGitDir(const std::string& dir) {
  fs::create_directories(dir + "/objects");
  fs::create_directories(dir + "/refs/heads");
  std::ofstream(dir + "/HEAD") << "ref: refs/heads/main\n";
}

TEST_CASE("FindGitDirs reads a linked worktree's gitdir and commondir", "[sandbox]") {
  char tmpl[] = "/tmp/sbXXXXXX";
  std::string root = fs::canonical(mkdtemp(tmpl)).string();
  MakeGitDir(root + "/repo/.git");
  fs::create_directories(root + "/repo/.git/worktrees/wt");
  fs::create_directories(root + "/wt/sub");
  std::ofstream(root + "/wt/.git") << "gitdir: " << root << "/repo/.git/worktrees/wt\n";
  std::ofstream(root + "/repo/.git/worktrees/wt/commondir") << "../..\n";
  std::ofstream(root + "/repo/.git/worktrees/wt/HEAD") << "ref: refs/heads/wt\n";
  GitDirs g = FindGitDirs(root + "/wt/sub");
  CHECK(g.git_dir == root + "/repo/.git/worktrees/wt");
  CHECK(g.common_dir == root + "/repo/.git");
  GitDirs main = FindGitDirs(root + "/repo");
  CHECK(main.git_dir == root + "/repo/.git");
  CHECK(main.common_dir == root + "/repo/.git");
  // A main repository's .git never has a commondir: one there is a planted redirect, which
  // neither the sandbox nor the daemon's git follows.
  CHECK(PlantedGitRedirect(root + "/repo").empty());
  std::ofstream(root + "/repo/.git/commondir") << root << "/elsewhere\n";
  main = FindGitDirs(root + "/repo");
  CHECK(main.common_dir == root + "/repo/.git");
  CHECK(PlantedGitRedirect(root + "/repo").find("commondir exists") != std::string::npos);
  fs::create_directories(root + "/repo/deep/er");
  CHECK(PlantedGitRedirect(root + "/repo/deep/er").find("commondir exists") != std::string::npos);
  CHECK(PlantedGitRedirect(root + "/wt/sub").empty());  // a linked worktree's own commondir
  SandboxPaths p;
  p.cwd = root + "/repo/.git/..";
  p.state_dir = root + "/repo";
  p.dispatch_dir = root + "/repo/d";
  CHECK(!ResolveSandboxPaths(p).ok());  // the cwd inside the state dir
  fs::remove_all(root);
}

TEST_CASE("FindGitDirs passes over a .git that is no repository, as git does", "[sandbox]") {
  char tmpl[] = "/tmp/sbXXXXXX";
  std::string root = fs::canonical(mkdtemp(tmpl)).string();
  MakeGitDir(root + "/repo/.git");
  fs::create_directories(root + "/repo/sub/.git");  // empty
  GitDirs g = FindGitDirs(root + "/repo/sub");
  CHECK(g.git_dir == root + "/repo/.git");
  CHECK(g.top == root + "/repo");
  CHECK(PlantedGitRedirect(root + "/repo/sub").empty());
  // A planted redirect above it is still found.
  std::ofstream(root + "/repo/.git/commondir") << root << "/elsewhere\n";
  CHECK(PlantedGitRedirect(root + "/repo/sub").find("commondir exists") != std::string::npos);
  fs::remove(root + "/repo/.git/commondir");
  // A .git file naming nothing: git stops there; only the file is known (and kept read-only).
  fs::create_directories(root + "/repo/broken");
  std::ofstream(root + "/repo/broken/.git") << "gitdir: " << root << "/nowhere\n";
  GitDirs b = FindGitDirs(root + "/repo/broken");
  CHECK(b.git_dir.empty());
  CHECK(b.top.empty());
  CHECK(b.dot_git == root + "/repo/broken/.git");
  SandboxPaths p;
  p.cwd = root + "/repo/broken";
  p.git = b;
  CHECK(MountAt(BwrapArgv(p, {"x"}), "--ro-bind-try", root + "/repo/broken/.git") > 0);
  fs::remove_all(root);
}

TEST_CASE("a .git a worker wrote is not followed to a directory git did not make for it",
          "[sandbox]") {
  char tmpl[] = "/tmp/sbXXXXXX";
  std::string root = fs::canonical(mkdtemp(tmpl)).string();
  MakeGitDir(root + "/repo/.git");
  MakeGitDir(root + "/repo/.git/worktrees/wt");
  std::ofstream(root + "/repo/.git/worktrees/wt/commondir") << "../..\n";
  MakeGitDir(root + "/state");  // the daemon's state directory, shaped like a git dir
  fs::create_directories(root + "/wt");
  fs::create_directories(root + "/work");
  auto resolve = [&](const std::string& dot_git_line) {
    std::ofstream(root + "/work/.git") << dot_git_line << "\n";
    SandboxPaths p;
    p.cwd = root + "/work";
    p.state_dir = root + "/state";
    return ResolveSandboxPaths(p);
  };
  // Into the state directory, or into another repository's worktree git dir (whose gitdir
  // file names that worktree, not this directory): refused, named.
  conclave::Status into_state = resolve("gitdir: " + root + "/state");
  CHECK_FALSE(into_state.ok());
  CHECK(into_state.message().find("which is hidden") != std::string::npos);
  std::ofstream(root + "/repo/.git/worktrees/wt/gitdir") << root << "/wt/.git\n";
  conclave::Status other = resolve("gitdir: " + root + "/repo/.git/worktrees/wt");
  CHECK_FALSE(other.ok());
  CHECK(other.message().find("git did not make for this directory") != std::string::npos);
  // The worktree git made for it: its gitdir file points back (absolute, or relative to the
  // git dir).
  std::ofstream(root + "/repo/.git/worktrees/wt/gitdir") << root << "/work/.git\n";
  CHECK(resolve("gitdir: " + root + "/repo/.git/worktrees/wt").ok());
  std::ofstream(root + "/repo/.git/worktrees/wt/gitdir") << "../../../../work/.git\n";
  CHECK(resolve("gitdir: " + root + "/repo/.git/worktrees/wt").ok());
  // The same words through a link (which could name a file the worker cannot see): not taken.
  std::ofstream(root + "/pointer") << root << "/work/.git\n";
  fs::remove(root + "/repo/.git/worktrees/wt/gitdir");
  fs::create_symlink(root + "/pointer", root + "/repo/.git/worktrees/wt/gitdir");
  CHECK_FALSE(resolve("gitdir: " + root + "/repo/.git/worktrees/wt").ok());
  fs::remove(root + "/repo/.git/worktrees/wt/gitdir");
  std::ofstream(root + "/repo/.git/worktrees/wt/gitdir") << "../../../../work/.git\n";
  // A submodule's git dir: its core.worktree points back at this directory, not another's.
  MakeGitDir(root + "/repo/.git/modules/x");
  std::ofstream(root + "/repo/.git/modules/x/config")
      << "[core]\n\tbare = false\n\tworktree = ../../../x\n";
  CHECK_FALSE(resolve("gitdir: " + root + "/repo/.git/modules/x").ok());
  std::ofstream(root + "/repo/.git/modules/x/config")
      << "[core]\n\tworktree = " << root << "/work\n";
  CHECK(resolve("gitdir: " + root + "/repo/.git/modules/x").ok());
  // As git may write it: in quotes, any case; the last value counts.
  std::ofstream(root + "/repo/.git/modules/x/config")
      << "[Core]\n\tWorktree = ../../../x\n\tworktree = \"" << root << "/work\"\n";
  CHECK(resolve("gitdir: " + root + "/repo/.git/modules/x").ok());
  // A git dir in the worker's own directory is its own...
  MakeGitDir(root + "/work/own");
  CHECK(resolve("gitdir: own").ok());
  // ...but not one under a hidden directory inside it (a terminal at HOME, the state dir
  // below): own git dir, commondir naming the state directory.
  std::ofstream(root + "/work/own/commondir") << root << "/work/state\n";
  MakeGitDir(root + "/work/state");
  std::ofstream(root + "/work/.git") << "gitdir: own\n";
  SandboxPaths home;
  home.cwd = root + "/work";
  home.state_dir = root + "/work/state";
  conclave::Status into_own_state = ResolveSandboxPaths(home);
  CHECK_FALSE(into_own_state.ok());
  CHECK(into_own_state.message().find("which is hidden") != std::string::npos);
  fs::remove(root + "/work/own/commondir");
  // A symbolic link named .git: not followed.
  fs::remove(root + "/work/.git");
  fs::create_directory_symlink(root + "/repo/.git", root + "/work/.git");
  SandboxPaths linked;
  linked.cwd = root + "/work";
  conclave::Status s = ResolveSandboxPaths(linked);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("symbolic link") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("bwrap read-only: nothing writable, no network, hidden paths stay hidden",
          "[sandbox]") {
  SandboxPaths p = Paths();
  p.read_only = true;
  p.cwd = "/home/u/proj/wt/sub";
  auto argv = BwrapArgv(p, {"git", "status"});
  auto end = std::find(argv.begin(), argv.end(), "--");
  for (const char* flag : {"--bind", "--bind-try"}) {
    INFO(flag);
    CHECK(std::find(argv.begin(), end, flag) == end);
  }
  CHECK(std::find(argv.begin(), end, "--unshare-net") != end);
  // What the worker could write is visible, read-only, where it was bound.
  long hide = MountAt(argv, "--tmpfs", "/home/u/.local/state/conclave");
  REQUIRE(hide > 0);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/wt/sub") > 0);
  // The worktree's top too (a hidden parent between would stop git), not for the worker.
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/wt") > 0);
  SandboxPaths worker = Paths();
  worker.cwd = "/home/u/proj/wt/sub";
  CHECK(MountAt(BwrapArgv(worker, {"x"}), "--ro-bind-try", "/home/u/proj/wt") < 0);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/.local/state/conclave/dispatches/7") > hide);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/repo/.git/worktrees/wt") > 0);
  CHECK(MountAt(argv, "--tmpfs", "/run/user/1000/conclave") > 0);
  // No socket into the daemon.
  CHECK(std::find(argv.begin(), end, "/run/user/1000/conclave/conclave.sock") == end);
  CHECK(std::vector<std::string>(end + 1, argv.end()) ==
        std::vector<std::string>{"git", "status"});
}

TEST_CASE("bwrap: a submodule's .git file is read-only", "[sandbox]") {
  SandboxPaths p = Paths();
  p.cwd = "/home/u/proj/repo/lib";
  p.git = {"/home/u/proj/repo/.git/modules/lib", "/home/u/proj/repo/.git/modules/lib",
           "/home/u/proj/repo/lib/.git", "/home/u/proj/repo/lib"};
  auto argv = BwrapArgv(p, {"x"});
  long cwd = MountAt(argv, "--bind", "/home/u/proj/repo/lib");
  REQUIRE(cwd > 0);
  CHECK(MountAt(argv, "--ro-bind-try", "/home/u/proj/repo/lib/.git") > cwd);
  CHECK(MountAt(argv, "--bind", "/home/u/proj/repo/.git/modules/lib") > 0);
}

// The git dirs are found on the loop when a sandboxed dispatch starts, from files a worker in
// that repository writes.
TEST_CASE("git files a worker made FIFOs are not waited on when the sandbox's git dirs are found",
          "[sandbox]") {
  char tmpl[] = "/tmp/sbXXXXXX";
  std::string root = fs::canonical(mkdtemp(tmpl)).string();
  MakeGitDir(root + "/repo/.git");
  const std::string wt_git = root + "/repo/.git/worktrees/wt";
  fs::create_directories(wt_git);
  fs::create_directories(root + "/wt");
  std::ofstream(root + "/wt/.git") << "gitdir: " << wt_git << "\n";
  std::ofstream(wt_git + "/HEAD") << "ref: refs/heads/wt\n";
  for (const char* f : {"/commondir", "/gitdir", "/config"}) {
    REQUIRE(mkfifo((wt_git + f).c_str(), 0600) == 0);
  }
  CHECK(conclave::testing::InChild([&] {
    SandboxPaths p;
    p.cwd = root + "/wt";
    p.state_dir = root + "/state";
    p.dispatch_dir = root + "/state/d";
    (void)ResolveSandboxPaths(p);  // whatever it decides, it decides without waiting
    return FindGitDirs(root + "/wt").git_dir == wt_git;
  }));
  fs::remove_all(root);
}
