// Service-level tests of what blocks a task besides the breaker: a worker that reports
// BLOCKED (a question for the coordinator, never a counted failure) and a dependency that
// failed or was cancelled (dependants blocked as dependency_failed instead of pending for
// ever). Real store, fake clock and launcher: no processes, no sleeps.
#include <catch2/catch.hpp>

#include "fixture_file.h"
#include "service_harness.h"

namespace conclave {
namespace {
using domain::DispatchState;
using domain::TaskState;
using testing::Fixture;
using testing::ServiceHarness;

// A command profile whose output must carry the worker contract.
struct Contracted : ServiceHarness {
  Contracted() {
    AddProfile("p", "f").contract = true;
    AddTerminal("w1", "p");
  }
  void Finish(const std::string& out, int exit_code = 0) {
    // A re-dispatch after an operational failure resumes: its launch waits for the partial
    // work to be read off the loop.
    REQUIRE(RunUntil([&] { return !launcher.Running().empty(); }));
    auto running = launcher.Running();
    REQUIRE(running.size() == 1);
    launcher.Finish(running.front(), out, exit_code);
  }
  int64_t WithDeps(const std::string& brief, std::vector<int64_t> deps) {
    service::CreateTaskInput in;
    in.task.brief = brief;
    in.deps = std::move(deps);
    int64_t id = 0;
    services->tasks.Create(in, [&](StatusOr<service::CreateTaskResult> r) {
      REQUIRE(r.ok());
      id = r->task.task.id;
    });
    REQUIRE(RunUntil([&] { return id != 0; }));
    return id;
  }
  Status Resolve(int64_t gate, const std::string& decision, const std::string& reason = "") {
    std::optional<Status> s;
    services->gates.Resolve(gate, decision, {}, reason,
                            [&](StatusOr<domain::Gate> g) { s = g.status(); });
    REQUIRE(RunUntil([&] { return s.has_value(); }));
    return *s;
  }
  Status Cancel(int64_t task) {
    std::optional<Status> s;
    services->tasks.Cancel(task, "", [&](StatusOr<service::TaskView> v) { s = v.status(); });
    REQUIRE(RunUntil([&] { return s.has_value(); }));
    return *s;
  }
};

const char* kBlockedReport =
    "SUMMARY: stopped before changing anything\nEVIDENCE: none\nCHANGES: none\nRISKS: none\n"
    "BLOCKERS: which database should the migration target, staging or prod?\nSTATUS: BLOCKED\n";
const char* kPassReport =
    "SUMMARY: migrated\nEVIDENCE: ran it\nCHANGES: none\nRISKS: none\nBLOCKERS: none\n"
    "STATUS: PASS\n";
const char* kFailReport =
    "SUMMARY: tried\nEVIDENCE: make test exit 2\nCHANGES: none\nRISKS: none\n"
    "BLOCKERS: none\nSTATUS: FAIL\n";

TEST_CASE("a worker that reports BLOCKED asks through a gate and is re-queued with the answer",
          "[service][blocked]") {
  Contracted h;
  int64_t t = h.AddTask("migrate the schema", [](domain::Task& x) { x.auto_retry = 3; });
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.Finish(kBlockedReport);
  REQUIRE(h.RunUntil([&] { return h.Task(t).status == TaskState::kBlocked; }));
  auto task = h.Task(t);
  CHECK(task.blocked_reason == "worker_blocked");
  CHECK(task.breaker_count == 0);  // not counted
  auto ds = h.Dispatches(t);
  REQUIRE(ds.size() == 1);  // no auto-retry of a question
  CHECK(ds[0].failure_kind == "worker_blocked");
  CHECK(ds[0].failure_class == "");
  CHECK(h.core->terminals.Get("w1")->state == domain::TerminalState::kIdle);
  // The coordinator is asked, with the worker's own words.
  auto asks = h.Messages("decision_gate");
  REQUIRE(asks.size() == 1);
  CHECK(asks[0].priority == "high");
  CHECK(asks[0].body.find("staging or prod?") != std::string::npos);
  auto gates = h.services->gates.List(true, t);
  REQUIRE(gates.size() == 1);
  CHECK(gates[0].question.find("staging or prod?") != std::string::npos);
  // Another dispatch is refused while it waits for the answer.
  CHECK_FALSE(h.Dispatch(t, "w1").ok());
  // The answer goes into the brief and the task runs again where it ran.
  REQUIRE(h.Resolve(gates[0].id, "staging", "prod is frozen this week").ok());
  REQUIRE(h.RunUntil([&] { return h.launcher.launches.size() == 2; }));
  task = h.Task(t);
  CHECK(task.status == TaskState::kDispatched);
  CHECK(task.brief.find("migrate the schema") == 0);
  CHECK(task.brief.find("Answer to your BLOCKERS (gate " + std::to_string(gates[0].id) +
                        ")\nstaging\nprod is frozen this week") != std::string::npos);
  ds = h.Dispatches(t);
  REQUIRE(ds.size() == 2);
  CHECK(ds[1].target == "w1");
  CHECK(ds[1].attempt == 2);
  // The re-run's brief carries the answer (the launcher got the rendered brief).
  const auto& plan = h.launcher.launches[1].plan;
  std::string delivered = plan.stdin_data;
  for (const auto& a : plan.spec.argv) delivered += a;
  for (const auto& f : plan.files) delivered += f.second;
  CHECK(delivered.find("prod is frozen this week") != std::string::npos);
  h.Finish(kPassReport);
  REQUIRE(h.RunUntil([&] { return h.Task(t).status == TaskState::kCompleted; }));
}

TEST_CASE("a worker that reports FAIL is still a counted failure", "[service][blocked]") {
  Contracted h;
  int64_t t = h.AddTask("make test");
  REQUIRE(h.Dispatch(t, "w1").ok());
  h.Finish(kFailReport);
  REQUIRE(h.RunUntil([&] { return h.Task(t).status == TaskState::kReady; }));
  CHECK(h.Task(t).breaker_count == 1);
  CHECK(h.Dispatches(t)[0].failure_kind == "worker_failed");
  CHECK(h.Messages("decision_gate").empty());
}

TEST_CASE("dependants of a failed task are blocked as dependency_failed, transitively",
          "[service][tasks]") {
  Contracted h;
  int64_t a = h.AddTask("build the parser", [](domain::Task& x) { x.auto_retry = 0; });
  int64_t b = h.WithDeps("use the parser", {a});
  int64_t c = h.WithDeps("document it", {b});
  int64_t other = h.AddTask("unrelated");
  int64_t d = h.WithDeps("needs both", {a, other});
  // A counted failure leaves a ready again: nothing is blocked by that.
  REQUIRE(h.Dispatch(a, "w1").ok());
  h.Finish("", 3);
  REQUIRE(h.RunUntil([&] { return h.Task(a).status == TaskState::kReady; }));
  CHECK(h.Task(b).status == TaskState::kPending);
  REQUIRE(h.Cancel(a).ok());
  REQUIRE(h.RunUntil([&] { return h.Task(c).status == TaskState::kBlocked; }));
  for (int64_t id : {b, c, d}) {
    INFO("task " << id);
    CHECK(h.Task(id).status == TaskState::kBlocked);
    CHECK(h.Task(id).blocked_reason == "dependency_failed");
  }
  CHECK(h.Task(other).status == TaskState::kReady);
  auto esc = h.Messages("escalation");
  int about = 0;
  for (const auto& m : esc) {
    if (m.subject.find("a dependency failed") != std::string::npos) ++about;
  }
  CHECK(about == 3);
  // A blocked dependant is not dispatched; it can be cancelled.
  CHECK(h.Dispatch(b, "w1").code() == Code::kFailedPrecondition);
  CHECK(h.Cancel(c).ok());
}

TEST_CASE("a dependant blocked by a failed dependency resumes when it runs again and completes",
          "[service][tasks]") {
  Contracted h;
  h.config.retry.max_attempts = 1;  // an operational failure fails the task at once
  int64_t a = h.AddTask("flaky step");
  int64_t b = h.WithDeps("after it", {a});
  int64_t c = h.WithDeps("after that", {b});
  // a's provider fails (HTTP 500 from a claude-shaped profile) and retries are used up.
  h.AddProfile("cl", "anthropic").parser = "claude-json";
  h.AddTerminal("c1", "cl");
  REQUIRE(h.Dispatch(a, "c1").ok());
  h.Finish(Fixture("claude/json/http500.txt"), 1);
  REQUIRE(h.RunUntil([&] { return h.Task(a).status == TaskState::kFailed; }));
  REQUIRE(h.RunUntil([&] { return h.Task(c).status == TaskState::kBlocked; }));
  CHECK(h.Task(b).blocked_reason == "dependency_failed");
  // Dispatched again, a completes: b is ready, c waits for b again.
  REQUIRE(h.Dispatch(a, "w1").ok());
  h.Finish(kPassReport);
  REQUIRE(h.RunUntil([&] { return h.Task(b).status == TaskState::kReady; }));
  CHECK(h.Task(c).status == TaskState::kPending);
  REQUIRE(h.Dispatch(b, "w1").ok());
  h.Finish(kPassReport);
  REQUIRE(h.RunUntil([&] { return h.Task(c).status == TaskState::kReady; }));
}

}  // namespace
}  // namespace conclave
