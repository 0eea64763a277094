// Service-level tests of run liveness: a silent run whose processes work (CPU or I/O, read by
// a fake activity probe) is kept alive — the run is told (NoteActivity, which restarts its idle
// clock) and an "activity" heartbeat says so; an idle one is not; an unreadable tree is never
// idle. Fake clock, fake launcher, no processes, no sleeps.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <optional>

#include "service_harness.h"

namespace conclave {
namespace {
using testing::ServiceHarness;

struct Silent : ServiceHarness {
  Silent()
      : ServiceHarness([](config::Config& c) {
          c.heartbeat_interval_s = 0;  // every sign of life is a heartbeat
          c.liveness_cpu_ms = 200;
          c.liveness_io_bytes = 65536;
        }) {
    auto& p = AddProfile("slow", "fam");
    p.idle_timeout_s = 4;  // scans every second
    AddTerminal("w1", "slow");
  }
  testing::FakeLauncher::Started* Run() {
    auto r = launcher.Running();
    REQUIRE(!r.empty());
    return r.front();
  }
  // Lets one scan happen and be answered.
  void Scan() {
    int64_t before = services->runs.activity_scans();
    clock.Advance(1000);
    REQUIRE(RunUntil([&] { return services->runs.activity_scans() > before; }));
  }
  std::vector<nlohmann::json> Heartbeats() {
    std::vector<nlohmann::json> out;
    for (const auto& m : Messages("heartbeat")) out.push_back(nlohmann::json::parse(m.payload));
    return out;
  }
};

TEST_CASE("a silent run whose processes work is alive — activity heartbeats say so",
          "[service][liveness]") {
  Silent h;
  int64_t t = h.AddTask("think hard");
  REQUIRE(h.Dispatch(t, "w1").ok());
  auto* l = h.Run();
  pid_t pid = l->run->pid();
  h.activity->Set(pid, 1000, 5000);
  h.Scan();  // the first sample is the baseline
  CHECK(l->run->activity_noted == 0);
  h.activity->Set(pid, 1150, 5000 + 60000);  // under both thresholds since the baseline
  h.Scan();
  CHECK(l->run->activity_noted == 0);
  CHECK(h.Heartbeats().empty());
  h.activity->Set(pid, 1250, 5000 + 60000);  // 250 ms of CPU since the baseline
  h.Scan();
  CHECK(l->run->activity_noted == 1);
  auto hb = h.Heartbeats();
  REQUIRE(hb.size() == 1);
  CHECK(hb[0]["signal"] == "activity");
  CHECK(hb[0]["cpu_ms"] == 250);
  // The measure restarts there: I/O alone is enough too.
  h.activity->Set(pid, 1260, 65000 + 70000);
  h.Scan();
  CHECK(l->run->activity_noted == 2);
  REQUIRE(h.Heartbeats().size() == 2);
  CHECK(h.Heartbeats()[1]["io_bytes"] == 70000);
  // Quiet again: nothing.
  h.Scan();
  CHECK(l->run->activity_noted == 2);
  // Output is a sign of life of its own, and its heartbeat says which.
  l->cb.on_output();
  h.Settle();
  REQUIRE(h.Heartbeats().size() == 3);
  CHECK(h.Heartbeats()[2]["signal"] == "output");
}

TEST_CASE("an unreadable process tree is never taken as idle", "[service][liveness]") {
  Silent h;
  int64_t t = h.AddTask("think hard");
  REQUIRE(h.Dispatch(t, "w1").ok());
  auto* l = h.Run();
  h.activity->Set(l->run->pid(), 0, 0, /*known=*/false);
  h.Scan();
  h.Scan();
  CHECK(l->run->activity_noted == 2);
  CHECK(h.Heartbeats().empty());  // unknown keeps the run alive but is no heartbeat
}

TEST_CASE("a finished run is no longer sampled — a profile without idle limits never is",
          "[service][liveness]") {
  Silent h;
  auto& quick = h.AddProfile("quick", "fam");
  quick.idle_timeout_s = 0;
  h.AddTerminal("q1", "quick");
  int64_t a = h.AddTask("silent one");
  REQUIRE(h.Dispatch(a, "w1").ok());
  h.Scan();
  h.launcher.Finish(h.Run(), "done\n", 0);
  REQUIRE(h.RunUntil([&] { return h.core->dispatches.ForTask(a).back().state !=
                                  domain::DispatchState::kRunning; }));
  int samples = h.activity->samples();
  int64_t b = h.AddTask("no idle limits");
  REQUIRE(h.Dispatch(b, "q1").ok());
  h.clock.Advance(60000);
  h.Settle();
  CHECK(h.activity->samples() == samples);
}

// One terminal, w1, and a task with the request that dispatches it there.
struct OneDispatch : testing::ServiceHarness {
  OneDispatch() {
    AddProfile("p", "fam");
    AddTerminal("w1", "p");
    task = AddTask("do it");
    in.task_id = task;
    in.to = "w1";
  }
  int64_t task = 0;
  service::DispatchInput in;
};

// A shutdown in the same loop turn as a dispatch, before its COMMIT: the launch that would
// follow the commit must not spawn a worker nobody stops; the dispatch ends as stopped by
// the shutdown, and the shutdown waits for that record.
TEST_CASE("a dispatch committed during shutdown is not launched, and shutdown waits for its record",
          "[service][shutdown]") {
  OneDispatch h;
  const int64_t t = h.task;
  std::optional<Status> answer;
  h.services->scheduler.Dispatch(h.in, [&](StatusOr<domain::Dispatch> d) { answer = d.status(); });
  bool stopped = false;
  h.services->Stop([&] { stopped = true; });  // same turn: the dispatch is not committed yet
  REQUIRE(h.RunUntil([&] { return stopped; }));
  h.Settle();
  CHECK(h.launcher.launches.empty());
  auto ds = h.Dispatches(t);
  REQUIRE(!ds.empty());
  CHECK(ds[0].state != domain::DispatchState::kRunning);  // ended by the shutdown
  for (const auto& d : ds) CHECK(d.state != domain::DispatchState::kRunning);  // (re-queued)
}

// The spawn starts while the Dispatch reply goes out: the launcher has the worker before the
// reply is given, and the reply still says running.
TEST_CASE("a dispatch's worker reaches the launcher before its reply and the reply says running",
          "[service][launch]") {
  OneDispatch h;
  std::optional<StatusOr<domain::Dispatch>> reply;
  size_t launches_at_reply = 0;
  h.services->scheduler.Dispatch(h.in, [&](StatusOr<domain::Dispatch> d) {
    launches_at_reply = h.launcher.launches.size();
    reply = std::move(d);
  });
  REQUIRE(h.RunUntil([&] { return reply.has_value(); }));
  REQUIRE(reply->ok());
  CHECK(launches_at_reply == 1);
  CHECK((*reply)->state == domain::DispatchState::kRunning);
  CHECK((*reply)->task_id == h.task);
}

}  // namespace
}  // namespace conclave

namespace conclave {
namespace {

TEST_CASE("each profile's workers get that profile's part of the daemon's environment, kept "
          "across its dispatches",
          "[service][launch]") {
  ServiceHarness h;
  h.core->daemon_env = {{"PATH", "/bin"}, {"TOOL_A", "a"}, {"TOOL_B", "b"}};
  for (auto [name, var] : {std::pair{"pa", "TOOL_A"}, std::pair{"pb", "TOOL_B"}}) {
    auto& p = h.AddProfile(name, std::string("fam-") + name);
    p.inherit_env = {var};
    p.max_concurrent = 2;
  }
  for (const char* t : {"a1", "a2"}) h.AddTerminal(t, "pa");
  for (const char* t : {"b1", "b2"}) h.AddTerminal(t, "pb");
  // a, b, a, b: a base kept under the wrong key, or one for all, shows in the second pair.
  for (const char* t : {"a1", "b1", "a2", "b2"}) REQUIRE(h.Dispatch(h.AddTask("go"), t).ok());
  REQUIRE(h.RunUntil([&] { return h.launcher.launches.size() == 4; }));
  for (size_t i = 0; i < 4; ++i) {
    const auto& env = h.launcher.launches[i].plan.spec.env;
    const bool a = i % 2 == 0;
    CAPTURE(i);
    CHECK(std::count(env.begin(), env.end(), "TOOL_A=a") == (a ? 1 : 0));
    CHECK(std::count(env.begin(), env.end(), "TOOL_B=b") == (a ? 0 : 1));
    CHECK(std::count(env.begin(), env.end(), "PATH=/bin") == 1);
  }
}

}  // namespace
}  // namespace conclave

// The spawn is made off the loop (exec::ProcessLauncher): between a dispatch's launch and the
// spawn's return the run is not in the supervisor's table yet. The fake launcher holds the
// spawn there; what happens meanwhile must reach the run once it is back.
namespace conclave {
namespace {

struct HeldSpawn : testing::ServiceHarness {
  // before_child: held while the launcher's thread prepares it, before any child exists.
  explicit HeldSpawn(bool before_child = false) {
    AddProfile("p", "fam");
    AddTerminal("w1", "p");
    launcher.hold_spawns = true;
    launcher.hold_before_child = before_child;
    task = AddTask("do it");
    REQUIRE(Dispatch(task, "w1").ok());
    REQUIRE(RunUntil([&] { return launcher.launches.size() == 1; }));
    Settle();
    REQUIRE(services->runs.running() == 0);  // held: not in the table
    REQUIRE(services->runs.launching() == 1);
  }
  testing::FakeRun& Run() { return *launcher.launches.front().run; }
  // The dispatch once its outcome is recorded.
  domain::Dispatch Ended() {
    REQUIRE(RunUntil([&] {
      return Dispatches(task).front().state != domain::DispatchState::kRunning;
    }));
    return Dispatches(task).front();
  }
  void Cancel() {
    std::optional<Status> cancelled;
    services->tasks.Cancel(task, "changed my mind", [&](StatusOr<service::TaskView> v) {
      cancelled = v.status();
    });
    REQUIRE(RunUntil([&] { return cancelled.has_value(); }));
    REQUIRE(cancelled->ok());
  }
  int64_t task = 0;
};

TEST_CASE("a cancel while the worker is being spawned stops the run as soon as the spawn is back",
          "[service][launch]") {
  HeldSpawn h;
  h.Cancel();
  CHECK(h.Run().stop == domain::StopReason::kNone);  // nothing to stop yet
  h.launcher.ReleaseSpawns();
  h.Settle();
  CHECK(h.Run().stop == domain::StopReason::kCancelled);
  h.launcher.Finish(&h.launcher.launches.front(), "");
  REQUIRE(h.RunUntil([&] { return h.services->runs.running() == 0; }));
  CHECK(h.Dispatches(h.task).front().state != domain::DispatchState::kRunning);
}

TEST_CASE("a cancel while the spawn is under way is the outcome even if the spawn then fails",
          "[service][launch]") {
  HeldSpawn h;
  h.Cancel();
  CHECK(h.launcher.launches.front().plan.abandoned->load());  // a queued spawn is not made
  h.launcher.ReleaseSpawns("stopped before the worker started");
  REQUIRE(h.RunUntil([&] {
    auto ds = h.Dispatches(h.task);
    return !ds.empty() && ds.front().state != domain::DispatchState::kRunning;
  }));
  auto d = h.Dispatches(h.task).front();
  CHECK(d.evidence.find("spawn_failed") == std::string::npos);  // not an operational failure
  CHECK(d.evidence.find("cancel") != std::string::npos);
  CHECK(h.services->runs.launching() == 0);
}

TEST_CASE("shutdown waits for a worker still being spawned, and stops it once it is back",
          "[service][launch][shutdown]") {
  HeldSpawn h;
  bool stopped = false;
  h.services->Stop([&] { stopped = true; });
  h.Settle();
  CHECK(!stopped);  // the spawn is not back: its child would be left running
  h.launcher.ReleaseSpawns();
  h.Settle();
  CHECK(h.Run().stop == domain::StopReason::kShutdown);
  CHECK(!stopped);  // stopped, not yet recorded
  h.launcher.Finish(&h.launcher.launches.front(), "");
  REQUIRE(h.RunUntil([&] { return stopped; }));
  CHECK(h.Dispatches(h.task).front().state != domain::DispatchState::kRunning);
}

TEST_CASE("a worker that calls before its spawn is back is already known as its dispatch's",
          "[service][launch][trust]") {
  HeldSpawn h;
  pid_t pid = h.Run().pid();
  // Its process chain as the daemon reads it: the worker's own process, then its spawned child
  // (the start time cannot be checked yet: the spawn has not reported it).
  auto d = h.services->runs.DispatchOf({{pid + 7, 5}, {pid, 1}});
  REQUIRE(d.has_value());
  CHECK(d->task_id == h.task);
  CHECK(!h.services->runs.DispatchOf({{pid + 1, 1}}).has_value());  // another pid is not
  auto live = h.services->runs.LivenessOf({h.task});
  REQUIRE(live.size() == 1);
  CHECK(live[0].pid == pid);
  CHECK(live[0].process_alive);
  h.launcher.ReleaseSpawns();
  h.Settle();
  CHECK(h.services->runs.running() == 1);
  CHECK(h.services->runs.launching() == 0);
  CHECK(h.services->runs.DispatchOf({{pid, 1}}).has_value());  // now by pid and start time
}

TEST_CASE("a spawn that fails once it is back ends the dispatch as spawn_failed",
          "[service][launch]") {
  testing::ServiceHarness h;
  h.AddProfile("p", "fam");
  h.AddTerminal("w1", "p");
  h.launcher.fail_next = "spawn /bin/x in /: No such file or directory (execve)";
  int64_t t = h.AddTask("do it");
  REQUIRE(h.Dispatch(t, "w1").ok());
  REQUIRE(h.RunUntil([&] {
    auto ds = h.Dispatches(t);
    return !ds.empty() && ds.front().state != domain::DispatchState::kRunning;
  }));
  CHECK(h.Dispatches(t).front().evidence.find("spawn_failed") != std::string::npos);
  CHECK(h.services->runs.launching() == 0);
}

TEST_CASE("a spawn whose child has been under way a whole period is killed and its dispatch fails",
          "[service][launch]") {
  HeldSpawn h;
  const int period = h.config.spawn_timeout_ms;
  pid_t child = h.Run().pid();
  h.clock.Advance(period);  // the child may have appeared just now: it gets a period more
  h.Settle();
  CHECK(h.launcher.aborted.empty());
  h.clock.Advance(period);
  h.Settle();
  REQUIRE(h.launcher.aborted == std::vector<pid_t>{child});
  CHECK(h.launcher.launches.front().plan.abandoned->load());
  // The killed child's spawn comes back as a run that ends killed: the stop is its outcome.
  h.launcher.ReleaseSpawns();
  h.Settle();
  CHECK(h.Run().stop == domain::StopReason::kSpawnFailed);
  h.launcher.Finish(&h.launcher.launches.front(), "", -1);
  auto d = h.Ended();
  CHECK(d.state == domain::DispatchState::kFailed);
  CHECK(d.evidence.find("spawn_failed") != std::string::npos);
  CHECK(d.evidence.find("stuck in the kernel") != std::string::npos);
  CHECK(h.launcher.aborted.size() == 1);
}

TEST_CASE("a spawn still queued behind another is not killed until its own child has had a "
          "whole period", "[service][launch]") {
  HeldSpawn h;
  const int period = h.config.spawn_timeout_ms;
  auto* slot = h.launcher.launches.front().plan.spec.early_pid;
  auto& progress = *h.launcher.launches.front().plan.progress;
  pid_t child = slot->exchange(0);  // not begun: the launcher's thread is on another spawn
  progress.on_thread.store(false);
  h.clock.Advance(3 * period);
  h.Settle();
  CHECK(h.launcher.aborted.empty());
  CHECK(h.launcher.replaced == 0);  // nor given up: the thread is not on it
  progress.on_thread.store(true);
  slot->store(child);  // begun
  h.clock.Advance(period);
  h.Settle();
  CHECK(h.launcher.aborted.empty());
  h.clock.Advance(period);
  h.Settle();
  CHECK(h.launcher.aborted == std::vector<pid_t>{child});
}

TEST_CASE("a spawn back in time is not watched any more", "[service][launch]") {
  HeldSpawn h;
  const int period = h.config.spawn_timeout_ms;
  h.clock.Advance(period + period / 2);
  h.launcher.ReleaseSpawns();
  h.Settle();
  h.clock.Advance(4 * period);
  h.Settle();
  CHECK(h.launcher.aborted.empty());
  CHECK(h.Run().stop == domain::StopReason::kNone);
}

TEST_CASE("shutdown kills a spawn still stuck at its deadline, so the launcher's thread ends",
          "[service][launch][shutdown]") {
  HeldSpawn h;
  bool stopped = false;
  h.services->Stop([&] { stopped = true; });
  h.Settle();
  CHECK(h.launcher.aborted.empty());  // a spawn under way gets the grace to come back
  h.clock.Advance(h.config.kill_grace_ms + 2000);
  h.Settle();
  CHECK(h.launcher.aborted == std::vector<pid_t>{h.Run().pid()});
  // And given up, so the launcher's thread, which the daemon's exit joins, is a fresh one,
  // and the dispatch recorded as stopped by the shutdown.
  CHECK(h.launcher.replaced == 1);
  CHECK(stopped);
  CHECK(h.services->runs.launching() == 0);
  CHECK(h.Ended().state == domain::DispatchState::kInterrupted);
}


TEST_CASE("a stuck spawn that comes back failed after its child was killed fails as stuck",
          "[service][launch]") {
  HeldSpawn h;
  h.clock.Advance(2 * h.config.spawn_timeout_ms);
  h.Settle();
  REQUIRE(h.launcher.aborted.size() == 1);
  h.launcher.ReleaseSpawns("spawn /x in /w: Interrupted system call (execve)");
  auto d = h.Ended();
  CHECK(d.state == domain::DispatchState::kFailed);
  CHECK(d.evidence.find("stuck in the kernel") != std::string::npos);
  CHECK(h.services->runs.launching() == 0);
}

TEST_CASE("a cancel while the spawn is stuck is still the outcome once the child is killed",
          "[service][launch]") {
  HeldSpawn h;
  h.Cancel();
  h.clock.Advance(2 * h.config.spawn_timeout_ms);
  h.Settle();
  CHECK(h.launcher.aborted.size() == 1);  // the cancel alone cannot bring the spawn back
  h.launcher.ReleaseSpawns();
  h.Settle();
  CHECK(h.Run().stop == domain::StopReason::kCancelled);
}

// A launch the launcher's thread has been on a whole period without a child: stuck in the
// worker's filesystem (its directory, its repository's HEAD, its program's PATH), where no
// signal reaches. Given up: the thread is replaced and the dispatch fails at once.
TEST_CASE("a launch stuck before its child is given up after a whole period, never reported after",
          "[service][launch]") {
  HeldSpawn h(/*before_child=*/true);
  const int period = h.config.spawn_timeout_ms;
  REQUIRE(h.launcher.launches.front().plan.spec.early_pid->load() == 0);
  h.clock.Advance(period);  // the thread may have taken it just now: a period more
  h.Settle();
  CHECK(h.launcher.replaced == 0);
  CHECK(h.Dispatches(h.task).front().state == domain::DispatchState::kRunning);
  h.clock.Advance(period);
  h.Settle();
  CHECK(h.launcher.replaced == 1);
  CHECK(h.launcher.aborted.empty());  // no child to kill
  auto d = h.Ended();
  CHECK(d.state == domain::DispatchState::kFailed);
  CHECK(d.evidence.find("spawn_failed") != std::string::npos);
  CHECK(d.evidence.find("stuck before its process existed") != std::string::npos);
  CHECK(h.services->runs.launching() == 0);
  CHECK(h.launcher.launches.front().plan.abandoned->load());
  // The old thread comes back: nothing is reported, nothing runs.
  h.launcher.ReleaseSpawns();
  h.clock.Advance(3 * period);
  h.Settle();
  CHECK(h.services->runs.running() == 0);
  CHECK(h.launcher.replaced == 1);
  CHECK(h.Dispatches(h.task).front().evidence == d.evidence);
}

TEST_CASE("a spawn still away a period after its child was killed is given up at once",
          "[service][launch]") {
  HeldSpawn h;
  h.clock.Advance(2 * h.config.spawn_timeout_ms);
  h.Settle();
  REQUIRE(h.launcher.aborted.size() == 1);
  CHECK(h.launcher.replaced == 0);  // killed: it is given a period to come back
  h.clock.Advance(h.config.spawn_timeout_ms);  // a wait SIGKILL cannot end
  h.Settle();
  CHECK(h.launcher.replaced == 1);
  CHECK(h.launcher.aborted.size() == 1);  // not killed again
  auto d = h.Ended();
  CHECK(d.state == domain::DispatchState::kFailed);
  CHECK(d.evidence.find("stuck in the kernel") != std::string::npos);
  CHECK(h.services->runs.launching() == 0);
}

TEST_CASE("a cancel while a launch is stuck before its child is the outcome when given up",
          "[service][launch]") {
  HeldSpawn h(/*before_child=*/true);
  h.Cancel();
  h.clock.Advance(2 * h.config.spawn_timeout_ms);
  h.Settle();
  CHECK(h.launcher.replaced == 1);
  auto d = h.Ended();
  CHECK(d.evidence.find("cancel") != std::string::npos);
  CHECK(d.evidence.find("spawn_failed") == std::string::npos);
}

std::vector<std::string> DoctorWarnings(testing::ServiceHarness& h) {
  std::optional<StatusOr<service::DoctorReport>> report;
  h.services->doctor.Run([&](StatusOr<service::DoctorReport> r) { report = std::move(r); });
  REQUIRE(h.RunUntil([&] { return report.has_value(); }));
  REQUIRE(report->ok());
  return (*report)->daemon_warnings;
}

TEST_CASE("status counts the spawn threads given up as stuck and doctor says what to look at",
          "[service][launch]") {
  HeldSpawn h(/*before_child=*/true);
  CHECK(h.services->Status().counts.at("launch_threads_stuck") == 0);
  CHECK(DoctorWarnings(h).empty());
  h.clock.Advance(2 * h.config.spawn_timeout_ms);
  h.Settle();
  REQUIRE(h.launcher.replaced == 1);
  auto counts = h.services->Status().counts;
  CHECK(counts.at("launch_threads_replaced") == 1);
  CHECK(counts.at("launch_threads_stuck") == 1);
  auto warnings = DoctorWarnings(h);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("1 of 1 spawn thread(s)") == 0);
  CHECK(warnings[0].find("new launches wait") == std::string::npos);
  // At the limit, a stuck launch is no longer given up: doctor says the launches wait.
  h.launcher.stuck = exec::ProcessLauncher::kMaxStuckThreads;
  warnings = DoctorWarnings(h);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("new launches wait") != std::string::npos);
  h.launcher.stuck = 0;  // they came back
  CHECK(DoctorWarnings(h).empty());
  CHECK(h.services->Status().counts.at("launch_threads_replaced") == 1);
}
}  // namespace
}  // namespace conclave
