// Unit tests: exec/command_runner — output and exit code; the timeout holds also after a
// command let go of its output; the daemon's git never runs through a planted redirect.
#include "exec/command_runner.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "../store/temp_db.h"

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
