// Service-level tests of a resumed launch (RunSupervisor::LaunchResumed): while the partial
// work of the attempt that ended early is read (git on the helper pool, held here by the fake
// command runner), a cancel ends the dispatch unstarted at once and git's late answer starts
// nothing. Real SQLite, fake clock, fake launcher and helper commands.
#include <catch2/catch.hpp>

#include "service_harness.h"

namespace conclave {
namespace {
using domain::DispatchState;
using testing::ServiceHarness;

struct Resumable : ServiceHarness {
  Resumable() : ServiceHarness([](config::Config& c) { c.retry.max_attempts = 1; }) {
    AddProfile("p", "f");
    AddTerminal("w1", "p");
  }
  // A writer's first attempt times out in a repository at commit abc123; the task is dispatched
  // again and its launch waits in the held `git diff --stat=120`.
  int64_t SecondAttemptHeld() {
    int64_t t = AddTask("implement it");
    REQUIRE(Dispatch(t, "w1").ok());
    REQUIRE(RunUntil([&] { return !launcher.Running().empty(); }));
    auto* l = launcher.Running().front();
    exec::RunOutcome o;
    o.hard_timeout = true;
    o.exit_code = -1;
    o.term_signal = 9;
    l->run->finished_ = true;
    l->cb.on_finished(o);
    REQUIRE(RunUntil([&] { return Dispatches(t).back().state == DispatchState::kTimedOut; }));
    auto first = Dispatches(t).back();
    first.start_head = "abc123";
    core->dispatches.Update(first);
    commands.Hold("--stat=120");  // the partial work's diff; other git calls go on
    REQUIRE(Dispatch(t, "w1").ok());
    REQUIRE(RunUntil([&] { return commands.held() == 1; }));
    REQUIRE(Dispatches(t).back().state == DispatchState::kRunning);
    CHECK(launcher.launches.size() == 1);  // the second attempt has not started
    return t;
  }
};

TEST_CASE("a resumed launch cancelled while its partial work is read never starts",
          "[service][resume]") {
  Resumable h;
  int64_t t = h.SecondAttemptHeld();
  std::optional<Status> cancelled;
  h.services->tasks.Cancel(t, "", [&](StatusOr<service::TaskView> v) { cancelled = v.status(); });
  REQUIRE(h.RunUntil([&] { return cancelled.has_value(); }));
  CHECK(cancelled->ok());
  // Ended at once, not when git comes back.
  CHECK(h.RunUntil([&] { return h.Dispatches(t).back().state == DispatchState::kCancelled; }));
  h.commands.Release();
  h.Settle();
  CHECK(h.launcher.launches.size() == 1);
}

}  // namespace
}  // namespace conclave
