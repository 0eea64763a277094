// Unit tests: exec/command_runner — output and exit code; the timeout holds also after a
// command let go of its output; the daemon's git never runs through a planted redirect, never
// runs a repository's hooks, never takes a directory a worker filled for a bare repository; a
// sandboxed terminal's git runs guarded, read-only and offline (ConfinedRunner).
#include "exec/command_runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "../store/temp_db.h"
#include "exec/confined_runner.h"

using namespace conclave;

TEST_CASE("a command's output and exit code come back", "[exec][runner]") {
  exec::ProcessCommandRunner runner;
  auto r = runner.Run({"/bin/sh", "-c", "echo hi; exit 3"}, "/", 10000);
  CHECK(r.out == "hi\n");
  CHECK(r.exit_code == 3);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("a command that let go of its output is still held to its timeout", "[exec][runner]") {
  testing::TempDir tmp;
  std::string pidfile = tmp.dir + "/pid";
  exec::ProcessCommandRunner runner;
  // Like a notify_command that sends its output to a log and then hangs on the network.
  auto r = runner.Run({"/bin/sh", "-c",
                       "echo $$ > " + pidfile + "; exec >/dev/null 2>&1; exec sleep 30"},
                      "/", 300);
  CHECK(r.timed_out);
  CHECK(r.exit_code == -1);
  pid_t pid = 0;
  std::ifstream(pidfile) >> pid;
  REQUIRE(pid > 0);
  CHECK(kill(pid, 0) == -1);  // killed and reaped
  CHECK(errno == ESRCH);
}

TEST_CASE("the daemon's git does not run where a main repository's .git holds a commondir",
          "[exec][runner]") {
  testing::TempDir tmp;
  exec::ProcessCommandRunner runner;
  std::string repo = tmp.dir + "/repo";
  std::filesystem::create_directories(repo + "/sub");
  REQUIRE(runner.Run({"git", "-C", repo, "init", "-q"}, "/", 10000).exit_code == 0);
  auto ok = runner.Run({"git", "-C", "sub", "rev-parse", "--git-dir"}, repo, 10000);
  CHECK(ok.exit_code == 0);
  // A redirect a sandboxed worker could plant: git would read the config of elsewhere/.
  std::ofstream(repo + "/.git/commondir") << tmp.dir << "/elsewhere\n";
  for (const auto& [argv, cwd] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"git", "-C", repo, "status"}, "/"},
           {{"git", "-C", "sub", "status"}, repo},
           {{"git", "status"}, repo + "/sub"}}) {
    INFO(cwd);
    auto refused = runner.Run(argv, cwd, 10000);
    CHECK(refused.exit_code == -1);
    CHECK(refused.out.empty());
  }
}

TEST_CASE("the daemon's git runs no hooks and finds no bare repository in a worker's directory",
          "[exec][runner]") {
  testing::TempDir tmp;
  exec::ProcessCommandRunner runner;
  std::string repo = tmp.dir + "/repo", mark = tmp.dir + "/hook-ran";
  std::filesystem::create_directories(repo);
  REQUIRE(runner.Run({"git", "-C", repo, "init", "-q"}, "/", 10000).exit_code == 0);
  std::ofstream(repo + "/.git/hooks/post-commit") << "#!/bin/sh\ntouch " << mark << "\n";
  std::filesystem::permissions(repo + "/.git/hooks/post-commit",
                               std::filesystem::perms::owner_all);
  auto commit = runner.Run({"git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@x",
                            "commit", "-q", "--allow-empty", "-m", "x"},
                           "/", 10000);
  CHECK(commit.exit_code == 0);
  CHECK(!std::filesystem::exists(mark));
  // What a worker can leave in its directory: a bare repository's files (HEAD, objects,
  // refs, config), and no .git. Git would take the directory itself for a repository.
  std::string planted = tmp.dir + "/planted";
  REQUIRE(runner.Run({"git", "init", "-q", "--bare", planted}, "/", 10000).exit_code == 0);
  CHECK(runner.Run({"git", "-C", planted, "rev-parse", "--git-dir"}, "/", 10000).exit_code != 0);
  CHECK(runner.Run({"git", "--git-dir", planted, "rev-parse", "--git-dir"}, "/", 10000)
            .exit_code == 0);  // named explicitly, it is used
}

namespace {
// Records what it was asked to run.
struct RecordingRunner : exec::CommandRunner {
  std::vector<std::vector<std::string>> argvs;
  exec::CommandResult Run(const std::vector<std::string>& argv, const std::string&,
                          int) override {
    argvs.push_back(argv);
    return {0, false, "ok\n"};
  }
};
}  // namespace

TEST_CASE("a sandboxed terminal's git runs guarded, read-only and offline", "[exec][runner]") {
  testing::TempDir tmp;
  std::string repo = tmp.dir + "/repo";
  std::filesystem::create_directories(repo);
  RecordingRunner inner;
  exec::SandboxPaths paths;
  paths.cwd = repo;
  paths.state_dir = tmp.dir + "/state";
  std::filesystem::create_directories(paths.state_dir);
  exec::ConfinedRunner confined(inner, paths);
  auto r = confined.Run({"git", "status"}, repo, 1000);
  CHECK(r.out == "ok\n");
  REQUIRE(inner.argvs.size() == 1);
  const auto& argv = inner.argvs[0];
  auto dash = std::find(argv.begin(), argv.end(), "--");
  REQUIRE(dash != argv.end());
  // bwrap itself starts with no environment but PATH (its pid 1 keeps what it started with).
  REQUIRE(argv.size() > 3);
  CHECK(argv[0] == "/usr/bin/env");
  CHECK(argv[1] == "-i");
  CHECK(argv[2].rfind("PATH=", 0) == 0);
  // bwrap by its absolute path: a relative PATH entry would find one in the worker's directory.
  CHECK(argv[3].rfind('/', 0) == 0);
  CHECK(argv[3].size() > 6);
  CHECK(argv[3].compare(argv[3].size() - 6, 6, "/bwrap") == 0);
  CHECK(std::find(argv.begin(), dash, "--unshare-net") != dash);
  CHECK(std::find(argv.begin(), dash, "--bind") == dash);
  std::vector<std::string> git(dash + 1, argv.end());
  REQUIRE(git.size() > 2);
  CHECK(git.front() == "git");
  CHECK(std::find(git.begin(), git.end(), "core.fsmonitor=false") != git.end());
  CHECK(git.back() == "status");
  // A planted redirect is refused before anything runs.
  std::filesystem::create_directories(repo + "/.git");
  std::ofstream(repo + "/.git/commondir") << tmp.dir << "/elsewhere\n";
  CHECK(confined.Run({"git", "status"}, repo, 1000).exit_code == -1);
  CHECK(inner.argvs.size() == 1);
  // A sandbox that cannot be set up runs nothing (the claims check then says git could not
  // list the changes).
  RecordingRunner none;
  exec::SandboxPaths gone = paths;
  gone.cwd = tmp.dir + "/no-such-dir";
  exec::ConfinedRunner broken(none, gone);
  CHECK(broken.Run({"git", "status"}, "/", 1000).exit_code == -1);
  CHECK(none.argvs.empty());
  // A program that is not installed is told apart from one that could not run.
  CHECK(confined.Run({"no-such-program-xyz"}, repo, 1000).exit_code == 127);
  // Once found, a 127 is env's or bwrap's failing: could not run.
  struct Says127 : exec::CommandRunner {
    exec::CommandResult Run(const std::vector<std::string>&, const std::string&, int) override {
      return {127, false, ""};
    }
  } says127;
  exec::ConfinedRunner no_bwrap(says127, paths);
  CHECK(no_bwrap.Run({"git", "status"}, tmp.dir, 1000).exit_code == -1);
  exec::ProcessCommandRunner plain;
  CHECK(plain.Run({"no-such-program-xyz"}, "/", 1000).exit_code == 127);
}
