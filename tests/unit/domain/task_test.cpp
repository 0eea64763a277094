// Unit tests: the task lifecycle (domain/task) — names, legal moves, the gate's hold.
#include <catch2/catch.hpp>

#include "domain/task.h"

namespace conclave::domain {
namespace {

TEST_CASE("task states keep their stored names and round-trip", "[domain][task]") {
  std::vector<std::string> names;
  for (TaskState s : AllTaskStates()) {
    names.emplace_back(TaskStateName(s));
    CHECK(ParseTaskState(TaskStateName(s)) == s);
  }
  CHECK(names == std::vector<std::string>{"pending", "ready", "dispatched", "completed", "failed",
                                          "blocked", "cancelled"});
  CHECK_FALSE(ParseTaskState("Ready").has_value());
  CHECK_FALSE(ParseTaskState("").has_value());
}

TEST_CASE("task transitions: the legal moves and the refused ones", "[domain][task]") {
  using S = TaskState;
  // (from, to, allowed)
  struct Row {
    S from, to;
    bool ok;
  };
  const Row rows[] = {
      {S::kPending, S::kReady, true},        {S::kPending, S::kDispatched, false},
      {S::kPending, S::kCancelled, true},    {S::kReady, S::kDispatched, true},
      {S::kReady, S::kCompleted, false},     {S::kDispatched, S::kCompleted, true},
      {S::kDispatched, S::kFailed, true},    {S::kDispatched, S::kReady, true},
      {S::kDispatched, S::kBlocked, true},   {S::kDispatched, S::kPending, false},
      {S::kFailed, S::kDispatched, true},    {S::kFailed, S::kCompleted, false},
      {S::kBlocked, S::kReady, true},        {S::kBlocked, S::kCompleted, true},
      {S::kCompleted, S::kReady, false},     {S::kCompleted, S::kCancelled, false},
      {S::kCancelled, S::kReady, false},     {S::kCancelled, S::kDispatched, false},
      {S::kCompleted, S::kCompleted, true},
  };
  for (const auto& r : rows) {
    INFO(TaskStateName(r.from) << " -> " << TaskStateName(r.to));
    CHECK(TaskTransitionAllowed(r.from, r.to) == r.ok);
  }
}

TEST_CASE("SetTaskStatus refuses an illegal move and leaves the task unchanged", "[domain][task]") {
  Task t;
  t.id = 7;
  t.status = TaskState::kCompleted;
  Status s = SetTaskStatus(t, TaskState::kDispatched, 100);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("completed") != std::string::npos);
  CHECK(s.message().find("dispatched") != std::string::npos);
  CHECK(t.status == TaskState::kCompleted);
  CHECK(t.updated_ms == 0);
}

TEST_CASE("a gate's hold keeps outcomes in the resume status until it resolves", "[domain][task]") {
  Task t;
  t.id = 3;
  t.status = TaskState::kDispatched;
  REQUIRE(HoldTaskForGate(t, 9, 10).ok());
  CHECK(t.status == TaskState::kBlocked);
  CHECK(t.blocked_reason == "gate:9");
  CHECK(t.HeldByGate());
  // The worker finished meanwhile: the outcome waits.
  REQUIRE(SetTaskStatus(t, TaskState::kCompleted, 20).ok());
  CHECK(t.status == TaskState::kBlocked);
  CHECK(t.resume_status == TaskState::kCompleted);
  // A second gate keeps the first.
  REQUIRE(HoldTaskForGate(t, 10, 30).ok());
  CHECK(t.blocked_reason == "gate:9");
  // Resolving one of two: still held, by the other.
  REQUIRE(ReleaseTaskFromGate(t, 10, 40).ok());
  CHECK(t.blocked_reason == "gate:10");
  CHECK(t.status == TaskState::kBlocked);
  REQUIRE(ReleaseTaskFromGate(t, 0, 50).ok());
  CHECK(t.status == TaskState::kCompleted);
  CHECK_FALSE(t.resume_status.has_value());
  CHECK(t.blocked_reason.empty());
}

TEST_CASE("cancelling goes through a gate's hold — finished tasks take no gate", "[domain][task]") {
  Task t;
  t.status = TaskState::kReady;
  REQUIRE(HoldTaskForGate(t, 1, 1).ok());
  REQUIRE(SetTaskStatus(t, TaskState::kCancelled, 2, "stop").ok());
  CHECK(t.status == TaskState::kCancelled);
  CHECK(t.blocked_reason == "stop");
  CHECK(HoldTaskForGate(t, 2, 3).code() == Code::kFailedPrecondition);
}

TEST_CASE("a circuit-open block replaces a gate's hold and says why", "[domain][task]") {
  Task t;
  t.status = TaskState::kDispatched;
  REQUIRE(HoldTaskForGate(t, 4, 1).ok());
  REQUIRE(SetTaskStatus(t, TaskState::kBlocked, 2, "circuit_open").ok());
  CHECK(t.blocked_reason == "circuit_open");
  CHECK_FALSE(t.HeldByGate());
  // Leaving a block clears the reason.
  REQUIRE(SetTaskStatus(t, TaskState::kReady, 3).ok());
  CHECK(t.blocked_reason.empty());
}

}  // namespace
}  // namespace conclave::domain
