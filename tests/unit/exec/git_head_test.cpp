// GitHead (HEAD read from the repository's files, no git process) and the written ≠ persisted
// check against a dispatch's starting point, on real repositories made with git in a temporary
// directory: a loose ref, a packed ref, a detached HEAD, a linked worktree's `.git` file.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "exec/command_runner.h"
#include "exec/git_head.h"
#include "exec/worktree_check.h"
#include "file_lease.h"
#include "in_child.h"

namespace conclave::exec {
namespace {
namespace fs = std::filesystem;

struct Repo {
  Repo() {
    char t[] = "/tmp/cvgXXXXXX";
    dir = mkdtemp(t);
    Git("init -q -b main .");
    Git("config user.email t@example.invalid");
    Git("config user.name t");
    Write("README.md", "hello\n");
    Git("add README.md");
    Git("commit -q -m first");
  }
  ~Repo() { fs::remove_all(dir); }
  std::string Git(const std::string& args) {
    ProcessCommandRunner r;
    std::vector<std::string> argv = {"/bin/sh", "-c", "git " + args + " 2>&1"};
    auto res = r.Run(argv, dir, 10000);
    INFO("git " << args);
    REQUIRE(res.exit_code == 0);
    return res.out.substr(0, res.out.find('\n'));
  }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(dir + "/" + rel).parent_path());
    std::ofstream(dir + "/" + rel) << text;
  }
  std::string dir;
};

TEST_CASE("HEAD is read from the repository's files: loose, packed, detached, worktree",
          "[exec][claims]") {
  Repo r;
  std::string head = r.Git("rev-parse HEAD");
  fs::create_directories(r.dir + "/sub/deeper");
  auto g = ReadGitHead(r.dir + "/sub/deeper");
  CHECK(g.in_repo);
  CHECK(g.commit == head);
  // Spelled with a trailing slash, dot-dot and doubled slashes, the same directory.
  CHECK(ReadGitHead(r.dir + "/sub/deeper/").commit == head);
  CHECK(ReadGitHead(r.dir + "/sub/../sub//deeper/.").commit == head);
  // A directory outside every repository walks up to "/" and finds none.
  std::string outside = fs::temp_directory_path() / ("cvgh-out-" + std::to_string(getpid()));
  fs::create_directories(outside + "/a/b");
  CHECK_FALSE(ReadGitHead(outside + "/a/b").in_repo);
  CHECK_FALSE(ReadGitHead(outside + "/a/b/").in_repo);
  fs::remove_all(outside);
  r.Git("pack-refs --all");
  REQUIRE_FALSE(fs::exists(r.dir + "/.git/refs/heads/main"));
  CHECK(ReadGitHead(r.dir).commit == head);
  r.Git("checkout -q --detach");
  CHECK(ReadGitHead(r.dir).commit == head);
  r.Git("checkout -q main");
  r.Git("worktree add -q -b side wt");
  r.Write("wt/new.txt", "x\n");
  r.Git("-C wt add new.txt");
  r.Git("-C wt commit -q -m side");
  std::string side = r.Git("-C wt rev-parse HEAD");
  REQUIRE(side != head);
  CHECK(ReadGitHead(r.dir + "/wt").commit == side);
  CHECK(ReadGitHead(r.dir).commit == head);
  CHECK_FALSE(ReadGitHead("/").in_repo);
  // An empty .git directory (a sandbox's guard) is no repository: git, and this, look above.
  fs::create_directories(r.dir + "/sub/deeper/.git");
  CHECK(ReadGitHead(r.dir + "/sub/deeper").commit == head);
  CHECK(r.Git("-C sub/deeper rev-parse HEAD") == head);
  CHECK_FALSE(IsGitDirectory(r.dir + "/sub/deeper/.git"));
  CHECK(IsGitDirectory(r.dir + "/.git"));
}

// Whether ReadGitHead(dir) finds a repository whose HEAD is want, computed in a child: a read
// that blocks or never ends fails the check instead of hanging the run.
bool ReadsInChild(const std::string& dir, const std::string& want) {
  return testing::InChild([&] {
    auto g = ReadGitHead(dir);
    return g.in_repo && g.commit == want;
  });
}

// ReadGitHead runs on the launcher's thread when a dispatch starts, in a repository its worker
// writes: a read that waited would hold every launch behind it for a period.
TEST_CASE("a ref, commondir or packed-refs a worker made a FIFO or a device link is not read: "
          "the read never waits or runs on",
          "[exec][claims]") {
  Repo r;
  const std::string head = r.Git("rev-parse HEAD");
  const std::string ref = r.dir + "/.git/refs/heads/main";
  auto reads = [&](const std::string& want) { return ReadsInChild(r.dir, want); };
  REQUIRE(reads(head));
  fs::remove(ref);
  REQUIRE(mkfifo(ref.c_str(), 0600) == 0);
  CHECK(reads(""));
  fs::remove(ref);
  fs::create_symlink("/dev/zero", ref);
  CHECK(reads(""));
  fs::remove(ref);
  std::ofstream(ref) << head << "\n";
  REQUIRE(mkfifo((r.dir + "/.git/commondir").c_str(), 0600) == 0);
  CHECK(reads(head));  // a commondir in a .git directory is not even opened
  fs::remove(r.dir + "/.git/commondir");
  fs::remove(ref);
  REQUIRE(mkfifo((r.dir + "/.git/packed-refs").c_str(), 0600) == 0);
  CHECK(reads(""));
  fs::remove(r.dir + "/.git/packed-refs");
  // packed-refs is scanned line by line: a ref past the first read's 64 KiB, on a last line
  // without its line end, is found.
  {
    std::ofstream packed(r.dir + "/.git/packed-refs");
    packed << "# pack-refs with: peeled fully-peeled sorted \n";
    for (int i = 0; i < 3000; ++i) {
      packed << std::string(40, 'a') << " refs/heads/other-" << i << "\n";
    }
    packed << head << " refs/heads/main";
  }
  CHECK(ReadGitHead(r.dir).commit == head);
}

// A process holding a write lease on path, forked: with let_go it gives the lease up when
// the kernel tells it of a break (SIGIO), as a well-behaved holder does, and says so on a
// pipe; without, it keeps it. It ends when the object is destroyed.
class LeaseHolder {
 public:
  LeaseHolder(const std::string& path, bool let_go) {
    int ready[2], stop[2], broke[2];
    REQUIRE(pipe2(ready, O_CLOEXEC) == 0);
    REQUIRE(pipe2(stop, O_CLOEXEC) == 0);
    REQUIRE(pipe2(broke, O_CLOEXEC | O_NONBLOCK) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      alarm(60);  // a bound if the test dies without ending it
      close(stop[1]);  // so that the parent's close is the end of the pipe
      close(ready[0]);
      close(broke[0]);
      static int lease_fd = -1, broke_fd = -1;
      broke_fd = broke[1];
      struct sigaction sa {};
      sa.sa_handler = let_go ? +[](int) {
        (void)!write(broke_fd, "b", 1);  // first: the reader may go on once it is let go
        fcntl(lease_fd, F_SETLEASE, F_UNLCK);
      }
                             : SIG_IGN;
      sigaction(SIGIO, &sa, nullptr);  // no SA_RESTART: the read below wakes, then reads on
      lease_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      char ok = lease_fd >= 0 && fcntl(lease_fd, F_SETLEASE, F_WRLCK) == 0 ? '1' : '0';
      (void)!write(ready[1], &ok, 1);
      char c;
      while (read(stop[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    close(ready[1]);
    close(stop[0]);
    close(broke[1]);
    stop_ = stop[1];
    broke_ = broke[0];
    char ok = '0';
    while (read(ready[0], &ok, 1) < 0 && errno == EINTR) {
    }
    close(ready[0]);
    held_ = ok == '1';
  }
  ~LeaseHolder() {
    close(stop_);
    close(broke_);
    int st;
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  bool held() const { return held_; }
  // Whether the holder was told of a break and let go.
  bool let_go() {
    char c;
    return read(broke_, &c, 1) == 1;
  }

 private:
  pid_t pid_ = -1;
  int stop_ = -1, broke_ = -1;
  bool held_ = false;
};

void SkipUnlessLeasesHold() {
  if (std::string why = testing::LeasesHold(5); !why.empty()) {
    std::cerr << "SKIPPED: " << why << "\n";
    std::exit(77);
  }
}

// A process that holds a file lease on HEAD or a ref (a worker's leftover, say) makes the
// non-blocking open of it fail at once. Hidden from the unit run: its own ctest entry reports
// SKIPPED (exit 77) where this filesystem grants no lease.
TEST_CASE("a git file held by a lease is waited for, and past the wait the start is unknown, "
          "never a stale packed value",
          "[.][git-head-lease]") {
  SkipUnlessLeasesHold();
  Repo r;
  const std::string first = r.Git("rev-parse HEAD");
  r.Git("pack-refs --all");  // packed-refs holds the first commit
  r.Write("b.txt", "b\n");
  r.Git("add b.txt");
  r.Git("commit -q -m second");  // the loose ref the second
  const std::string second = r.Git("rev-parse HEAD");
  const std::string ref = r.dir + "/.git/refs/heads/main";
  REQUIRE(fs::exists(ref));
  REQUIRE(second != first);
  SECTION("a holder that lets go when told is waited for") {
    LeaseHolder holder(ref, /*let_go=*/true);
    REQUIRE(holder.held());
    GitHead g = ReadGitHead(r.dir);
    CHECK(g.commit == second);
    CHECK_FALSE(g.leased);
    CHECK(holder.let_go());  // the read did meet the lease
  }
  SECTION("a ref whose holder keeps it: unknown, not the packed first commit") {
    LeaseHolder holder(ref, /*let_go=*/false);
    REQUIRE(holder.held());
    GitHead g = ReadGitHead(r.dir);
    CHECK(g.in_repo);
    CHECK(g.leased);
    CHECK(g.commit.empty());
  }
  SECTION("HEAD whose holder keeps it: unknown") {
    LeaseHolder holder(r.dir + "/.git/HEAD", /*let_go=*/false);
    REQUIRE(holder.held());
    GitHead g = ReadGitHead(r.dir);
    CHECK(g.leased);
    CHECK(g.commit.empty());
  }
  SECTION("a linked worktree's .git file whose holder keeps it: no start is read") {
    r.Git("worktree add -q -b side wt");
    REQUIRE(ReadGitHead(r.dir + "/wt").commit == second);
    LeaseHolder holder(r.dir + "/wt/.git", /*let_go=*/false);
    REQUIRE(holder.held());
    GitHead g = ReadGitHead(r.dir + "/wt");
    CHECK(g.leased);
    CHECK(g.commit.empty());
  }
  // Let go of (the holder ended): read as before.
  CHECK(ReadGitHead(r.dir).commit == second);
}

TEST_CASE("a ref is not followed out of the repository, and packed-refs is read in bounds",
          "[exec][claims]") {
  Repo r;
  const std::string head = r.Git("rev-parse HEAD");
  const std::string ref = r.dir + "/.git/refs/heads/main";
  auto reads = [&](const std::string& want) { return ReadsInChild(r.dir, want); };
  // A file outside holding a commit-like line (one the sandbox may hide from the worker).
  const std::string outside = r.dir + "-outside";
  std::ofstream(outside) << std::string(40, 'b') << "\n";
  struct Remove {
    std::string p;
    ~Remove() { fs::remove(p); }
  } remove_outside{outside};
  fs::remove(ref);
  fs::create_symlink(outside, ref);
  CHECK(reads(""));
  fs::remove(ref);
  std::ofstream(ref) << head << "\n";
  std::ofstream(r.dir + "/.git/HEAD") << "ref: " << outside << "\n";  // an absolute "ref"
  CHECK(reads(""));
  std::ofstream(r.dir + "/.git/HEAD") << "ref: refs/heads/main\n";
  REQUIRE(reads(head));
  // packed-refs: a 32 MiB line (sparse zeros, no line end) before the ref is skipped as no ref
  // line; a file past 64 MiB is not read at all.
  fs::remove(ref);
  const std::string packed = r.dir + "/.git/packed-refs";
  {
    std::ofstream out(packed);
    out.seekp(32 << 20);
    out << "\n" << head << " refs/heads/main\n";
  }
  CHECK(reads(head));
  fs::remove(packed);
  { std::ofstream(packed) << head << " refs/heads/main\n"; }
  REQUIRE(truncate(packed.c_str(), int64_t{8} << 30) == 0);
  CHECK(reads(""));
}

TEST_CASE("no link on the way to a ref is followed, and a main repository's commondir is not taken",
          "[exec][claims]") {
  Repo r;
  const std::string head = r.Git("rev-parse HEAD");
  auto reads = [&](const std::string& want) { return ReadsInChild(r.dir, want); };
  // A directory outside (hidden from a sandboxed worker) with a commit-like file in it.
  const std::string outside = r.dir + "-out";
  fs::create_directories(outside + "/refs/heads");
  std::ofstream(outside + "/y") << std::string(40, 'c') << "\n";
  std::ofstream(outside + "/refs/heads/main") << std::string(40, 'c') << "\n";
  struct Remove {
    std::string p;
    ~Remove() { fs::remove_all(p); }
  } remove_outside{outside};
  fs::create_directory_symlink(outside, r.dir + "/.git/refs/heads/x");
  std::ofstream(r.dir + "/.git/HEAD") << "ref: refs/heads/x/y\n";
  CHECK(reads(""));
  std::ofstream(r.dir + "/.git/HEAD") << "ref: refs/heads/main\n";
  REQUIRE(reads(head));
  // A commondir in a .git directory: a redirect to another repository's refs.
  std::ofstream(r.dir + "/.git/commondir") << outside << "\n";
  fs::remove(r.dir + "/.git/refs/heads/main");
  CHECK(reads(""));
  // Nor in a git dir a `.git` file names (a submodule's), which is no worktree's.
  const std::string mod = r.dir + "/.git/modules/x";
  for (const char* d : {"/objects", "/refs/heads"}) fs::create_directories(mod + d);
  std::ofstream(mod + "/HEAD") << "ref: refs/heads/main\n";
  std::ofstream(mod + "/commondir") << outside << "\n";
  fs::create_directories(r.dir + "/sub");
  std::ofstream(r.dir + "/sub/.git") << "gitdir: ../.git/modules/x\n";
  CHECK(ReadsInChild(r.dir + "/sub", ""));
  std::ofstream(mod + "/refs/heads/main") << head << "\n";
  CHECK(ReadsInChild(r.dir + "/sub", head));
}

TEST_CASE("claims hold against the starting point: commits since, subfolder cwd, odd names",
          "[exec][claims]") {
  Repo r;
  std::string start = r.Git("rev-parse HEAD");
  r.Write("sub/keep.txt", "k\n");
  r.Git("add sub/keep.txt");
  r.Git("commit -q -m sub");
  r.Write("committed.txt", "c\n");
  r.Write("sub/made.txt", "m\n");
  r.Write("café.txt", "e\n");
  r.Write("my notes.txt", "n\n");
  r.Git("add committed.txt");
  r.Git("commit -q -m work");
  ProcessCommandRunner git;
  ClaimBasis root{r.dir, start, 0, nullptr};
  CHECK(UnpersistedClaims(git, root, {"committed.txt", "sub/keep.txt", "café.txt",
                                      "my notes.txt", "sub/made.txt"})
            .empty());
  auto bad = UnpersistedClaims(git, root, {"README.md", "never.txt"});
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].find("identical to the dispatch's starting point") != std::string::npos);
  CHECK(bad[1].find("does not exist") != std::string::npos);
  // From a subfolder: relative to it, or to the repository root.
  ClaimBasis sub{r.dir + "/sub", start, 0, nullptr};
  CHECK(UnpersistedClaims(git, sub, {"made.txt", "keep.txt", "sub/made.txt"}).empty());
  CHECK(UnpersistedClaims(git, sub, {"README.md"}).size() == 1);
  // With no starting point, a commit made since is indistinguishable from old work.
  ClaimBasis unknown{r.dir, "", 0, nullptr};
  CHECK(UnpersistedClaims(git, unknown, {"committed.txt"}).size() == 1);
  CHECK(UnpersistedClaims(git, unknown, {"café.txt", "my notes.txt"}).empty());
}

TEST_CASE("a file already dirty at the start holds as a claim only if it changed since",
          "[exec][claims]") {
  Repo r;
  std::string start = r.Git("rev-parse HEAD");
  // Edited (tracked) and created (untracked) an hour before the dispatch, never committed.
  auto an_hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const char* f : {"README.md", "sub/old.txt", "sub/again.txt"}) {
    r.Write(f, "before the dispatch\n");
    fs::last_write_time(r.dir + "/" + f, an_hour_ago);
  }
  r.Write("fresh.txt", "just now\n");  // dirty, but too recent to tell whose it is
  int64_t started = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
  ProcessCommandRunner git;
  auto dirty = std::make_shared<const DirtyFiles>(SnapshotDirty(git, r.dir + "/sub"));
  CHECK(dirty->count("README.md") == 1);  // repository paths, from a subfolder too
  CHECK(dirty->count("sub/old.txt") == 1);
  r.Write("sub/again.txt", "changed by the worker\n");
  ClaimBasis from_sub{r.dir + "/sub", start, started, dirty};
  CHECK(UnpersistedClaims(git, from_sub, {"again.txt", "../fresh.txt"}).size() == 1);  // ".." is refused
  CHECK(UnpersistedClaims(git, from_sub, {"again.txt", "fresh.txt"}).empty());
  auto bad = UnpersistedClaims(git, from_sub, {"old.txt", "README.md"});
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].find("old.txt: claimed as changed but it is exactly as it was") == 0);
  CHECK(bad[1].find("README.md: claimed as changed but it is exactly as it was") == 0);
  // Without the snapshot the same claims hold (they differ from HEAD): the old judgement.
  ClaimBasis no_snapshot{r.dir + "/sub", start, started, nullptr};
  CHECK(UnpersistedClaims(git, no_snapshot, {"old.txt", "README.md"}).empty());
}

TEST_CASE("outside a repository a claim needs a file modified after the dispatch started",
          "[exec][claims]") {
  char t[] = "/tmp/cvnXXXXXX";
  std::string dir = mkdtemp(t);
  std::ofstream(dir + "/old.txt") << "o\n";
  std::ofstream(dir + "/new.txt") << "n\n";
  fs::last_write_time(dir + "/old.txt", fs::file_time_type::clock::now() - std::chrono::hours(2));
  int64_t started = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() - 60000;
  ProcessCommandRunner git;
  auto bad = UnpersistedClaims(git, {dir, "", started, nullptr}, {"new.txt", "old.txt", "gone.txt"});
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].find("old.txt: claimed as changed but not modified since") == 0);
  CHECK(bad[1].find("gone.txt: claimed as changed but does not exist") == 0);
  fs::remove_all(dir);
}

namespace {
struct FixedRunner : CommandRunner {
  int exit_code;
  explicit FixedRunner(int code) : exit_code(code) {}
  CommandResult Run(const std::vector<std::string>&, const std::string&, int) override {
    return {exit_code, false, ""};
  }
};
}  // namespace

TEST_CASE("a claim is not judged by file times when git could not run, or lost the repository",
          "[exec][claims]") {
  char t[] = "/tmp/cvgXXXXXX";
  std::string dir = mkdtemp(t);
  std::ofstream(dir + "/touched.txt") << "x\n";  // modified after the start: would pass
  ClaimBasis started_outside{dir, "", 1, nullptr};
  ClaimBasis started_in_repo{dir, std::string(40, 'a'), 1, nullptr};
  // Git refused or its sandbox failed (-1, or bwrap's 1): no claim holds.
  for (int code : {-1, 1}) {
    FixedRunner r(code);
    auto problems = UnpersistedClaims(r, started_outside, {"touched.txt"});
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].find("cannot be checked") != std::string::npos);
  }
  // "Not a repository" where the dispatch started in one: no claim holds either.
  FixedRunner not_repo(128);
  CHECK(UnpersistedClaims(not_repo, started_in_repo, {"touched.txt"}).size() == 1);
  // Where it started outside any repository, file times decide.
  CHECK(UnpersistedClaims(not_repo, started_outside, {"touched.txt"}).empty());
  fs::remove_all(dir);
}

TEST_CASE("git's NUL-separated listings split without decoding", "[exec][claims]") {
  CHECK(SplitGitZ(std::string("a b.txt\0caf\xc3\xa9.txt\0", 18), false) ==
        std::vector<std::string>{"a b.txt", "caf\xc3\xa9.txt"});
  CHECK(SplitGitZ(std::string(" M x y\0?? z\0", 12), true) ==
        std::vector<std::string>{"x y", "z"});
}

}  // namespace
}  // namespace conclave::exec
