// Unit tests: the orphan sweep (exec/child_registry) and spawns on other threads. A spawn lasts
// until its child reaches execve; the sweep on the loop must neither wait for it nor reap the
// child it is making (whose owner would then lose its exit status).
#include "exec/child_registry.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>

using namespace conclave;

namespace {

TEST_CASE("an orphan sweep neither waits for a spawn under way nor reaps the child it makes",
          "[exec][orphans]") {
  auto& registry = exec::ChildRegistry::Instance();
  std::atomic<pid_t> slot{0};
  std::promise<void> ready, go;
  std::shared_future<void> released = go.get_future().share();
  pid_t child = -1;
  std::thread spawner([&] {
    registry.SpawnTracked(&slot, [&]() -> pid_t {
      pid_t p = fork();
      if (p == 0) _exit(3);
      slot.store(p);  // where the kernel puts it before the child runs (CLONE_PARENT_SETTID)
      siginfo_t si{};
      waitid(P_PID, static_cast<id_t>(p), &si, WEXITED | WNOWAIT);  // exited, not reaped
      child = p;
      ready.set_value();
      released.wait();  // the spawn is still under way
      return p;
    });
  });
  ready.get_future().wait();
  auto sweep = std::async(std::launch::async, [&] { return registry.ReapOrphans(); });
  // A bound against a hang, not a synchronisation: a sweep that waits for the spawn never
  // returns before go.
  bool returned = sweep.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  go.set_value();
  spawner.join();
  sweep.wait();
  CHECK(returned);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);  // the owner still gets its child's status
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  registry.Untrack(child);
}

TEST_CASE("a sweep leaves a failed spawn's child to its spawner while the slot says -pid",
          "[exec][orphans]") {
  // exec/vfork_exec: a child whose exec failed is reaped by the spawning thread, its slot
  // holding -pid meanwhile (not a child to signal any more, still not the sweep's).
  auto& registry = exec::ChildRegistry::Instance();
  std::atomic<pid_t> slot{0};
  std::promise<void> ready, go;
  std::shared_future<void> released = go.get_future().share();
  int status = -1;
  pid_t reaped = 0;
  std::thread spawner([&] {
    registry.SpawnTracked(&slot, [&]() -> pid_t {
      pid_t p = fork();
      if (p == 0) _exit(5);
      slot.store(p);
      siginfo_t si{};
      waitid(P_PID, static_cast<id_t>(p), &si, WEXITED | WNOWAIT);
      slot.store(-p);  // being reaped by this thread
      ready.set_value();
      released.wait();
      reaped = waitpid(p, &status, 0);
      slot.store(0);
      return -1;  // the spawn failed
    });
  });
  ready.get_future().wait();
  registry.ReapOrphans();  // runs while the slot says -pid
  go.set_value();
  spawner.join();
  REQUIRE(reaped > 0);  // the spawner, not the sweep, got the status
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 5);
}

}  // namespace
