// Unit tests: outcome handling as pure decisions (domain/outcome) — ClassifyOutcome and
// DecideNext as tables.
#include <catch2/catch.hpp>

#include "domain/outcome.h"

namespace conclave::domain {
namespace {

WorkerContract Contract(std::vector<std::string> missing, std::string status = "PASS",
                        std::vector<std::string> changed = {}) {
  WorkerContract c;
  c.missing = std::move(missing);
  c.status = std::move(status);
  c.changed_files = std::move(changed);
  c.sections["SUMMARY"] = "it went";
  c.sections["BLOCKERS"] = "the build server is down";
  return c;
}

TEST_CASE("ClassifyOutcome: the order of the rules", "[domain][outcome]") {
  struct Row {
    const char* name;
    RunFacts run;
    OutputFacts out;
    ContractFacts contract;
    double cost, budget;
    FailureKind kind;
    DispatchState state;
    const char* evidence;  // a substring of the evidence
  };
  RunFacts clean;
  clean.exit_code = 0;
  RunFacts stopped_cancel = clean;
  stopped_cancel.stop = StopReason::kCancelled;
  stopped_cancel.stop_detail = "cancel: task cancelled";
  RunFacts shutdown = clean;
  shutdown.stop = StopReason::kShutdown;
  RunFacts spawn = clean;
  spawn.stop = StopReason::kSpawnFailed;
  spawn.stop_detail = "spawn_failed: no such program";
  RunFacts budget_stop = clean;
  budget_stop.stop = StopReason::kBudget;
  budget_stop.stop_detail = "budget: cap passed";
  RunFacts timeout = clean;
  timeout.hard_timeout = true;
  timeout.duration_ms = 61'000;
  timeout.exit_code = -1;
  RunFacts idle = clean;
  idle.idle_killed = true;
  idle.idle_kill_s = 900;
  RunFacts exit3 = clean;
  exit3.exit_code = 3;
  exit3.last_line = "make: *** [all] Error 2";
  OutputFacts ok_out;
  OutputFacts rate_limited{FailureKind::kRateLimited, "API Error: 429", ""};
  ContractFacts none;
  ContractFacts needed{true, false, Contract({}), {}};
  ContractFacts missing{true, false, Contract({"EVIDENCE", "RISKS"}), {}};
  ContractFacts fail{true, false, Contract({}, "FAIL"), {}};
  ContractFacts blocked{true, false, Contract({}, "BLOCKED"), {}};
  ContractFacts claims{true, true, Contract({}, "PASS", {"a.cpp"}), {"a.cpp: claimed as changed but does not exist"}};
  const Row rows[] = {
      {"success", clean, ok_out, needed, 0.1, 1.0, FailureKind::kNone, DispatchState::kSucceeded, ""},
      {"cancel wins over everything", stopped_cancel, rate_limited, missing, 9, 1,
       FailureKind::kCancelled, DispatchState::kCancelled, "cancel: task cancelled"},
      {"shutdown", shutdown, ok_out, none, 0, 0, FailureKind::kInterrupted,
       DispatchState::kInterrupted, "daemon shut down"},
      {"spawn", spawn, ok_out, none, 0, 0, FailureKind::kSpawnFailed, DispatchState::kFailed,
       "no such program"},
      {"budget stop", budget_stop, ok_out, none, 0, 0, FailureKind::kBudgetExceeded,
       DispatchState::kFailed, "cap passed"},
      {"hard timeout", timeout, rate_limited, none, 0, 0, FailureKind::kTimeout,
       DispatchState::kTimedOut, "hard timeout after 61 s"},
      {"idle kill", idle, ok_out, none, 0, 0, FailureKind::kHeartbeatLost, DispatchState::kFailed,
       "no output for 900 s"},
      {"parser first", exit3, rate_limited, none, 0, 0, FailureKind::kRateLimited,
       DispatchState::kFailed, "429"},
      {"non-zero exit", exit3, ok_out, needed, 0, 0, FailureKind::kNonZeroExit,
       DispatchState::kFailed, "exit 3: make: *** [all] Error 2"},
      {"contract missing", clean, ok_out, missing, 0, 0, FailureKind::kContractViolation,
       DispatchState::kFailed, "missing section(s) EVIDENCE, RISKS"},
      {"worker says FAIL", clean, ok_out, fail, 0, 0, FailureKind::kWorkerFailed,
       DispatchState::kFailed, "worker reported FAIL: the build server is down"},
      {"worker says BLOCKED: a question, not a failure", clean, ok_out, blocked, 0, 0,
       FailureKind::kWorkerBlocked, DispatchState::kFailed,
       "worker reported BLOCKED: the build server is down"},
      {"claims", clean, ok_out, claims, 0, 0, FailureKind::kClaimNotPersisted,
       DispatchState::kFailed, "written != persisted: a.cpp"},
      {"cost over the cap", clean, ok_out, needed, 2.5, 1.0, FailureKind::kBudgetExceeded,
       DispatchState::kFailed, "passed the per-dispatch cap"},
      {"no cap", clean, ok_out, needed, 2.5, 0, FailureKind::kNone, DispatchState::kSucceeded, ""},
  };
  for (const auto& r : rows) {
    INFO(r.name);
    Classification c = ClassifyOutcome(r.run, r.out, r.contract, r.cost, r.budget);
    CHECK(c.kind == r.kind);
    CHECK(c.state == r.state);
    CHECK(c.evidence.find(r.evidence) != std::string::npos);
  }
}

TEST_CASE("ClassifyOutcome: a contract not required is not checked", "[domain][outcome]") {
  RunFacts clean;
  clean.exit_code = 0;
  ContractFacts c{false, false, Contract({"SUMMARY", "EVIDENCE"}, "FAIL"), {}};
  CHECK(ClassifyOutcome(clean, {}, c, 0, 0).kind == FailureKind::kNone);
}

DecisionInput Input(FailureKind kind, int op_retries = 0) {
  DecisionInput in;
  in.task_id = 4;
  in.dispatch_id = 9;
  in.profile = "p";
  in.outcome.kind = kind;
  in.outcome.evidence = "because";
  in.retry = {1000, 60000, 4, 0.0};
  in.op_retries = op_retries;
  in.now_ms = 1'000'000;
  if (IsCounted(kind)) in.fingerprint = "fp1";
  return in;
}

TEST_CASE("DecideNext: what follows each kind of outcome", "[domain][outcome]") {
  SECTION("success completes the task and resets the breaker") {
    auto in = Input(FailureKind::kNone);
    in.breaker = {3, "fp1", false};
    NextStep n = DecideNext(in);
    CHECK(n.task_status == TaskState::kCompleted);
    CHECK(n.completed);
    CHECK(n.breaker.consecutive == 0);
    CHECK(n.requeue == Requeue::kNone);
  }
  SECTION("an operational failure re-queues on the same target after a backoff, counted") {
    NextStep n = DecideNext(Input(FailureKind::kProviderUnavailable, 1));
    CHECK_FALSE(n.task_status.has_value());
    CHECK(n.requeue == Requeue::kSameTarget);
    CHECK(n.count_op_retry);
    CHECK(n.requeue_not_before_ms == 1'000'000 + 2000);  // base * 2^(2-1), no jitter
  }
  SECTION("operational failures stop at max_attempts and escalate") {
    NextStep n = DecideNext(Input(FailureKind::kTransportError, 3));
    CHECK(n.task_status == TaskState::kFailed);
    CHECK(n.requeue == Requeue::kNone);
    CHECK(n.escalation.find("exhausted 4 attempts (transport_error): because") != std::string::npos);
  }
  SECTION("a rate limit cools the profile for the provider's hint") {
    auto in = Input(FailureKind::kRateLimited);
    in.retry_after_ms = 7000;
    NextStep n = DecideNext(in);
    CHECK(n.cooldown_until_ms == 1'000'000 + 7000);
    CHECK(n.requeue == Requeue::kSameTarget);
  }
  SECTION("auth errors fail at once, urgently") {
    NextStep n = DecideNext(Input(FailureKind::kAuthError));
    CHECK(n.task_status == TaskState::kFailed);
    CHECK(n.task_reason == "auth_error");
    CHECK(n.escalation_priority == "urgent");
    CHECK(n.requeue == Requeue::kNone);
  }
  SECTION("interrupted re-runs where it was, reported as status, not counted") {
    NextStep n = DecideNext(Input(FailureKind::kInterrupted));
    CHECK(n.requeue == Requeue::kSameTarget);
    CHECK_FALSE(n.count_op_retry);
    CHECK(n.report_as_status);
  }
  SECTION("a cancelled dispatch leaves the task ready, with an escalation") {
    NextStep n = DecideNext(Input(FailureKind::kCancelled));
    CHECK(n.task_status == TaskState::kReady);
    CHECK(n.escalation.find("dispatch 9 was stopped") != std::string::npos);
  }
  SECTION("a cancelled task stays as it is") {
    auto in = Input(FailureKind::kWorkerFailed);
    in.task_status = TaskState::kCancelled;
    NextStep n = DecideNext(in);
    CHECK_FALSE(n.task_status.has_value());
    CHECK(n.requeue == Requeue::kNone);
  }
  SECTION("a counted failure makes the task ready; auto-retry stays on the terminal") {
    auto in = Input(FailureKind::kNonZeroExit);
    NextStep n = DecideNext(in);
    CHECK(n.task_status == TaskState::kReady);
    CHECK(n.breaker.consecutive == 1);
    in.auto_retry = 2;
    in.auto_retries_used = 1;
    n = DecideNext(in);
    CHECK(n.task_status == TaskState::kDispatched);
    CHECK(n.requeue == Requeue::kSameTerminal);
    CHECK(n.auto_retry_used);
    in.task_held_by_gate = true;
    CHECK(DecideNext(in).requeue == Requeue::kNone);
  }
  SECTION("the fifth same-fingerprint failure opens the breaker and blocks the task") {
    auto in = Input(FailureKind::kWorkerFailed);
    in.breaker = {4, "fp1", false};
    in.auto_retry = 5;
    NextStep n = DecideNext(in);
    CHECK(n.breaker.open);
    CHECK(n.breaker_opened);
    CHECK(n.task_status == TaskState::kBlocked);
    CHECK(n.task_reason == "circuit_open");
    CHECK(n.requeue == Requeue::kNone);
  }
  SECTION("a worker that reports BLOCKED asks the coordinator: blocked, not counted, no retry") {
    auto in = Input(FailureKind::kWorkerBlocked);
    in.breaker = {4, "fp1", false};  // one more counted failure would open it
    in.auto_retry = 3;
    NextStep n = DecideNext(in);
    CHECK(n.task_status == TaskState::kBlocked);
    CHECK(n.task_reason == "worker_blocked");
    CHECK(n.ask_coordinator);
    CHECK(n.requeue == Requeue::kNone);
    CHECK_FALSE(n.auto_retry_used);
    CHECK_FALSE(n.breaker.open);
    CHECK(n.breaker.consecutive == 4);
  }
  SECTION("budget exceeded fails the task and says why") {
    NextStep n = DecideNext(Input(FailureKind::kBudgetExceeded));
    CHECK(n.task_status == TaskState::kFailed);
    CHECK(n.task_reason == "budget_exceeded");
    CHECK(n.escalation == "dispatch 9 stopped: because");
  }
}

TEST_CASE("DecideNext: jitter comes from the caller's random bits", "[domain][outcome]") {
  auto in = Input(FailureKind::kTransportError);
  in.retry.jitter = 0.2;
  in.random_bits[1] = 0;
  int64_t low = DecideNext(in).requeue_not_before_ms;
  in.random_bits[1] = ~uint64_t{0};
  int64_t high = DecideNext(in).requeue_not_before_ms;
  CHECK(low == 1'000'000 + 800);
  CHECK(high > 1'000'000 + 1190);
}

}  // namespace
}  // namespace conclave::domain

namespace conclave::domain {
namespace {

TEST_CASE("a reviewer that claims changes breaks its contract", "[outcome][review]") {
  RunFacts run;
  run.exit_code = 0;
  ContractFacts c;
  c.reviewer = true;
  c.contract = ParseWorkerContract("```json\n{\"findings\": []}\n```\nCHANGES:\n- src/a.cpp: fixed\n");
  auto r = ClassifyOutcome(run, {}, c, 0, 0);
  CHECK(r.kind == FailureKind::kContractViolation);
  CHECK_THAT(r.evidence, Catch::Contains("reviewer claimed changes") && Catch::Contains("src/a.cpp"));
  c.contract = ParseWorkerContract("```json\n{\"findings\": []}\n```\nCHANGES: none\n");
  CHECK(ClassifyOutcome(run, {}, c, 0, 0).kind == FailureKind::kNone);
}

}  // namespace
}  // namespace conclave::domain
