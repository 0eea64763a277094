// Unit tests: spawning workers into their own process group (exec/child_process, exec/proc_info).
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <thread>

#include "common/runtime.h"
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

// The start time is taken from the boot-time clock around the spawn instead of /proc: it must
// be the very number /proc shows, or recovery would not know its own worker after a crash.
TEST_CASE("a spawned child's start time, read from the clock around the spawn, is /proc's",
          "[exec]") {
  exec::SpawnSpec spec;
  spec.argv = {"true"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  int from_clock = 0;
  for (int i = 0; i < 200; ++i) {
    auto before = exec::BootTicks::Now();
    auto c = exec::SpawnChild(spec);
    auto after = exec::BootTicks::Now();
    REQUIRE(c.ok());
    INFO("spawn " << i);
    CHECK(c->start_time == exec::ReadProcStartTime(c->pid));  // a zombie until reaped below
    // Within one tick outside, so within it inside SpawnChild too: the clock's number.
    if (auto t = exec::StartTimeBetween(before, after)) {
      ++from_clock;
      CHECK(*t == c->start_time);
    }
    for (int fd : {c->pidfd, c->stdin_fd, c->stdout_fd, c->stderr_fd}) close(fd);
    int st;
    waitpid(c->pid, &st, 0);
  }
  // Most spawns fall within one tick (a slow sanitizer build on a loaded machine still has
  // well over 20 of 200). On a host that never suspended CLOCK_MONOTONIC would pass too: the
  // boot-time clock is what the kernel stamps, and it differs after a suspend.
  CHECK(from_clock >= 20);
  CHECK_FALSE(exec::StartTimeBetween({50'000'000}, {60'000'000}));  // ticks 5 and 6
  CHECK(exec::StartTimeBetween({50'000'000}, {59'999'999}) == 5);
  CHECK_FALSE(exec::StartTimeBetween({0}, {1}));
  CHECK_FALSE(exec::StartTimeBetween({60'000'000}, {50'000'000}));
}

TEST_CASE("FindProcessesWithEnv finds a child by its environment entries, and only it",
          "[exec]") {
  const std::string mark = "CONCLAVE_TEST_MARK=" + std::to_string(getpid()) + "-find";
  exec::SpawnSpec spec;
  // It says so once it runs: the spawn may return before the kernel has laid out the new
  // environment, a line on stdout comes after.
  spec.argv = {"/bin/sh", "-c", "echo up; read x"};  // then waits on its stdin
  spec.env = {"PATH=/usr/bin:/bin", mark, "CONCLAVE_DISPATCH_ID=7"};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  REQUIRE(c.ok());
  pollfd p{c->stdout_fd, POLLIN, 0};
  REQUIRE(poll(&p, 1, 10000) == 1);
  auto found = exec::FindProcessesWithEnv({mark, "CONCLAVE_DISPATCH_ID=7"});
  REQUIRE(found.size() == 1);
  CHECK(found[0].pid == c->pid);
  CHECK(found[0].pgid == c->pid);
  CHECK(found[0].start_time == c->start_time);
  // Every entry must match exactly: another dispatch id or a prefix is not this process.
  CHECK(exec::FindProcessesWithEnv({mark, "CONCLAVE_DISPATCH_ID=70"}).empty());
  CHECK(exec::FindProcessesWithEnv({mark, "CONCLAVE_DISPATCH_ID="}).empty());
  // Names: the variable is there, whatever its value (recovery: any dispatch's worker).
  CHECK(exec::FindProcessesWithEnv({mark}, {"CONCLAVE_DISPATCH_ID"}).size() == 1);
  CHECK(exec::FindProcessesWithEnv({mark}, {"CONCLAVE_DISPATCH_ID", "CONCLAVE_DISPATCH_TOKEN"})
            .empty());
  CHECK(exec::FindProcessesWithEnv({mark}, {"CONCLAVE_DISPATCH"}).empty());  // not a prefix
  CHECK(exec::StillRunning(c->pid, c->start_time));
  exec::SignalGroup(c->pid, SIGKILL);
  // Exited, not reaped yet: a zombie is no longer running, though its pid is still there.
  siginfo_t info{};
  REQUIRE(waitid(P_PID, static_cast<id_t>(c->pid), &info, WEXITED | WNOWAIT) == 0);
  CHECK(!exec::StillRunning(c->pid, c->start_time));
  CHECK(exec::SameProcess(c->pid, c->start_time));
  int st;
  waitpid(c->pid, &st, 0);
  CHECK(!exec::SameProcess(c->pid, c->start_time));
  CHECK(exec::FindProcessesWithEnv({mark}).empty());
}

// What a child says of itself: field N of /proc/self/stat, read by the child (sh's own stat
// through $$; its name, sh, has no spaces, so awk's fields are /proc's). "" when it could not
// be read: no Catch assertion here, the caller may be another thread.
std::string ChildStatField(int field) {
  exec::SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", "awk '{print $" + std::to_string(field) + "}' /proc/$$/stat"};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  auto c = exec::SpawnChild(spec);
  if (!c.ok()) return "";
  close(c->stdin_fd);
  std::string out;
  char buf[64];
  for (;;) {
    pollfd p{c->stdout_fd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) break;
    ssize_t n = read(c->stdout_fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  int st;
  waitpid(c->pid, &st, 0);
  for (int fd : {c->stdout_fd, c->stderr_fd, c->pidfd}) close(fd);
  return out;
}

// conclaved's children run child_nice (config, default 10) nicer than the daemon — the thread
// that set it, conclaved's main — so a busy machine's CPU goes to the daemon's loop first; a
// child of a thread that is nicer still (the helper pool's, which run as nice as the children)
// runs as nice as that thread, no nicer. Relative to the nice the test runs at (a `nice ctest`
// starts above 0).
TEST_CASE("a spawned child runs child_nice nicer than the thread that set it and never less nice "
          "than its spawner",
          "[exec]") {
  constexpr int kNice = 19;  // field 19 of /proc/PID/stat
  errno = 0;
  const int base = getpriority(PRIO_PROCESS, 0);
  REQUIRE(errno == 0);
  auto nice = [](int n) { return std::to_string(n > 19 ? 19 : n) + "\n"; };
  auto at = [](int n) { return n > 19 ? 19 : n; };
  std::string by_default, inc7, from_plus3, from_plus9, capped, none, from_main;
  int raised3 = -1, raised9 = -1;
  std::thread t([&] {  // a thread's nice is its own: the test's main thread keeps its own
    by_default = ChildStatField(kNice);
    exec::SetChildNice(7);
    inc7 = ChildStatField(kNice);
    const auto self = static_cast<id_t>(gettid());
    raised3 = setpriority(PRIO_PROCESS, self, at(base + 3));
    from_plus3 = ChildStatField(kNice);  // 7 nicer than the daemon, not 7 nicer than this
    raised9 = setpriority(PRIO_PROCESS, self, at(base + 9));
    from_plus9 = ChildStatField(kNice);  // as this thread, nicer than the daemon's 7
    exec::SetChildNice(19);
    capped = ChildStatField(kNice);
    exec::SetChildNice(0);  // children keep their spawner's nice
    none = ChildStatField(kNice);
    exec::SetChildNice(3);  // from this thread, at base + 9: that is now the daemon's nice
  });
  t.join();
  from_main = ChildStatField(kNice);  // 3 nicer than the thread that set it, not than this one
  exec::SetChildNice(0);
  REQUIRE(raised3 == 0);  // making oneself nicer needs no privilege
  REQUIRE(raised9 == 0);
  CHECK(by_default == nice(base));
  CHECK(inc7 == nice(base + 7));
  CHECK(from_plus3 == nice(base + 7));
  CHECK(from_plus9 == nice(base + 9));
  CHECK(capped == nice(19));
  CHECK(none == nice(base + 9));  // as the spawning thread
  CHECK(from_main == nice(base + 12));
}

// The daemon's background threads run SCHED_BATCH (common/runtime.h); a command one of them
// spawns (git, a verify command, a notifier) must run as any other process, SCHED_OTHER.
TEST_CASE("a child spawned from a SCHED_BATCH background thread runs SCHED_OTHER", "[exec]") {
  // Field 41 of its own /proc stat is the policy (0 SCHED_OTHER, 3 SCHED_BATCH).
  auto policy_of_child = [] { return ChildStatField(41); };
  std::string from_batch, batch_self, from_normal;
  std::thread t([&] {
    conclave::BeginBackgroundThreads();
    batch_self = std::to_string(sched_getscheduler(0));
    from_batch = policy_of_child();
    conclave::EndBackgroundThreads();
    from_normal = policy_of_child();
  });
  t.join();
  REQUIRE(batch_self == std::to_string(SCHED_BATCH));  // the thread itself did switch
  CHECK(from_batch == "0\n");
  CHECK(from_normal == "0\n");
}

}  // namespace
