// Unit tests: spawning workers into their own process group (exec/child_process, exec/proc_info).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "exec/child_process.h"
#include "exec/proc_info.h"

using namespace conclave;

namespace {

TEST_CASE("spawned children get their own process group — start time identifies them",
          "[exec]") {
  exec::SpawnSpec spec;
  spec.argv = {"sleep", "5"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  CHECK(getpgid(c->pid) == c->pid);
  CHECK(c->start_time > 0);
  CHECK(exec::SameProcess(c->pid, c->start_time));
  CHECK(!exec::SameProcess(c->pid, c->start_time + 1));  // a recycled pid never matches
  exec::SignalGroup(c->pid, SIGKILL);
  int st;
  waitpid(c->pid, &st, 0);
  CHECK(!exec::ProcessGroupAlive(c->pid));
  spec.argv = {"definitely-not-a-program-xyz"};
  auto missing = exec::SpawnChild(spec);
  CHECK(!missing.ok());
  CHECK(missing.status().message().find("not found") != std::string::npos);
}

TEST_CASE("FindProcessesWithEnv finds a child by its environment entries, and only it",
          "[exec]") {
  const std::string mark = "CONCLAVE_TEST_MARK=" + std::to_string(getpid()) + "-find";
  exec::SpawnSpec spec;
  spec.argv = {"sleep", "30"};
  spec.env = {"PATH=/usr/bin:/bin", mark, "CONCLAVE_DISPATCH_ID=7"};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  // posix_spawn returns once the child's exec has swapped its memory, which can be before the
  // kernel has laid out its new environment: look until it has (bounded).
  std::vector<exec::ProcStat> found;
  for (int i = 0; i < 5000 && found.empty(); ++i) {
    found = exec::FindProcessesWithEnv({mark, "CONCLAVE_DISPATCH_ID=7"});
    if (found.empty()) usleep(1000);
  }
  REQUIRE(found.size() == 1);
  CHECK(found[0].pid == c->pid);
  CHECK(found[0].pgid == c->pid);
  CHECK(found[0].start_time == c->start_time);
  // Every entry must match exactly: another dispatch id or a prefix is not this process.
  CHECK(exec::FindProcessesWithEnv({mark, "CONCLAVE_DISPATCH_ID=70"}).empty());
  CHECK(exec::FindProcessesWithEnv({mark, "CONCLAVE_DISPATCH_ID="}).empty());
  exec::SignalGroup(c->pid, SIGKILL);
  int st;
  waitpid(c->pid, &st, 0);
  CHECK(exec::FindProcessesWithEnv({mark}).empty());
}

}  // namespace
