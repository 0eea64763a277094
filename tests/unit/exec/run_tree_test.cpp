// Unit tests: finding and stopping the processes of one run that left its process group
// (exec/run_tree) — real processes, real /proc.
#include "exec/run_tree.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "exec/child_process.h"

using namespace conclave;

namespace {

bool Gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(st, line);
  auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
}

// A run whose shell starts a `setsid` grandchild and exits at once: the grandchild is in
// another session and group, re-parented away. Returns the grandchild's pid.
pid_t RunThatEscapes(const std::string& mark, const std::string& pidfile) {
  exec::SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > '" + pidfile + "'"};
  spec.env = {"PATH=/usr/bin:/bin", mark};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  int st = 0;
  waitpid(c->pid, &st, 0);
  pid_t escaped = 0;
  std::ifstream(pidfile) >> escaped;
  REQUIRE(escaped > 0);
  return escaped;
}

}  // namespace

TEST_CASE("run tree: a setsid grandchild is found by the run's environment and killed",
          "[exec]") {
  std::string dir = std::filesystem::temp_directory_path() / ("run-tree-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string mark = "CONCLAVE_DISPATCH_ID=tree-test-" + std::to_string(getpid());
  pid_t escaped = RunThatEscapes(mark, dir + "/pid");
  // `setsid` may still be turning into `sleep`: its environment is the run's either way.
  exec::RunMarks marks;
  marks.env = {mark};
  auto found = exec::FindRunProcesses(marks);
  REQUIRE(found.size() == 1);
  CHECK(found[0].pid == escaped);
  // Another run's mark finds nothing; this test process is never among them.
  exec::RunMarks other;
  other.env = {mark + "0"};
  CHECK(exec::FindRunProcesses(other).empty());
  CHECK(exec::SignalProcesses(found, SIGKILL) == 1);
  // A scanned process whose start time no longer matches is never signalled.
  auto stale = found;
  stale[0].start_time += 1;
  CHECK(exec::SignalProcesses(stale, SIGKILL) == 0);
  // Not our child: init (or a subreaper) reaps it; gone or a zombie either way.
  for (int i = 0; i < 500 && !Gone(escaped); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(Gone(escaped));
  std::filesystem::remove_all(dir);
}

TEST_CASE("run tree: the leader's descendants are found without any mark, and its group can be left out",
          "[exec]") {
  exec::SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 60 & wait"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  exec::RunMarks marks;
  marks.leader = c->pid;
  marks.leader_start = c->start_time;
  // The shell forks its sleep soon after it starts.
  std::vector<exec::ProcStat> found;
  for (int i = 0; i < 500 && found.size() < 2; ++i) {
    found = exec::FindRunProcesses(marks);
    if (found.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(found.size() == 2);
  marks.skip_leader_group = true;  // both are in the leader's group
  CHECK(exec::FindRunProcesses(marks).empty());
  marks.leader_start += 1;  // a recycled leader pid is not the run's
  marks.skip_leader_group = false;
  CHECK(exec::FindRunProcesses(marks).empty());
  exec::SignalGroup(c->pid, SIGKILL);
  int st = 0;
  waitpid(c->pid, &st, 0);
}
