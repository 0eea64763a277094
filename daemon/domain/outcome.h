// Outcome handling as pure decisions (DESIGN §2 "load → classify → decide → apply → emit").
// ClassifyOutcome turns the facts of a finished run — how it ended, what the CLI's parser
// found, the worker contract, the written ≠ persisted check, the cost — into a failure kind,
// the evidence that decided it and the dispatch's final state. DecideNext turns that
// classification, the task and the retry policy into what happens next: the task's status,
// a re-queue (where and when), a profile cooldown, the breaker, an escalation.
// Pure: no I/O, no clock, no randomness of its own (callers pass time and random bits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/backoff.h"
#include "domain/circuit_breaker.h"
#include "domain/dispatch.h"
#include "domain/failure_kind.h"
#include "domain/task.h"
#include "domain/worker_contract.h"

namespace conclave::domain {

// Why the daemon stopped a run itself (kNone: the run ended on its own or by a timeout).
enum class StopReason { kNone, kSpawnFailed, kCancelled, kBudget, kShutdown };

struct RunFacts {
  StopReason stop = StopReason::kNone;
  std::string stop_detail;  // what the stopper said, e.g. "cancel: task cancelled"
  bool hard_timeout = false;
  bool idle_killed = false;
  int exit_code = -1;  // -1 when killed by a signal
  int term_signal = 0;
  int64_t duration_ms = 0;
  int64_t idle_kill_s = 0;  // the silence after which an idle run is killed
  std::string last_line;    // last line of stderr (of stdout when stderr is empty)
};

struct OutputFacts {
  FailureKind parsed_failure = FailureKind::kNone;  // what the CLI's parser classified
  std::string parsed_evidence;
  std::string result_text;  // the model's final answer
};

struct ContractFacts {
  bool required = false;  // the profile/role expects the worker contract
  bool writer = false;    // claims under CHANGES are checked against the worktree
  WorkerContract contract;
  std::vector<std::string> unpersisted;  // claims that do not hold (written ≠ persisted)
  bool reviewer = false;  // a reviewer changes nothing: any claim under CHANGES breaks it
};

struct Classification {
  FailureKind kind = FailureKind::kNone;
  std::string evidence;
  DispatchState state = DispatchState::kSucceeded;
};

Classification ClassifyOutcome(const RunFacts& run, const OutputFacts& out,
                               const ContractFacts& contract, double cost_usd, double budget_usd);

// The outcome word of a worker_done: "succeeded" or "failed".
std::string_view OutcomeName(bool succeeded);

// "operational" | "counted" | "" for a kind.
std::string FailureClassName(FailureKind kind);

struct DecisionInput {
  int64_t task_id = 0, dispatch_id = 0;
  std::string profile;
  TaskState task_status = TaskState::kDispatched;
  bool task_held_by_gate = false;
  int auto_retry = 0, auto_retries_used = 0;
  BreakerState breaker;  // before this attempt
  Classification outcome;
  std::string fingerprint;  // set for counted failures
  BackoffPolicy retry;
  int op_retries = 0;                    // operational retries so far in this chain
  std::optional<int64_t> retry_after_ms;  // a provider hint, already capped
  uint64_t random_bits[2] = {0, 0};       // jitter for the cooldown and the retry delay
  int64_t now_ms = 0;
};

enum class Requeue { kNone, kSameTarget, kSameTerminal };

struct NextStep {
  std::optional<TaskState> task_status;  // nullopt: the task stays as it is
  std::string task_reason;               // why it is blocked / failed
  bool completed = false;                // success: store the result, release dependants
  Requeue requeue = Requeue::kNone;
  int64_t requeue_not_before_ms = 0;
  bool count_op_retry = false;
  bool auto_retry_used = false;
  std::optional<int64_t> cooldown_until_ms;  // the profile cools down (rate limited)
  BreakerState breaker;                      // after this attempt
  bool breaker_opened = false;               // urgent escalation with the attempts ledger
  std::string escalation;                    // text for the coordinator ("" = none)
  std::string escalation_priority = "high";
  bool report_as_status = false;  // interrupted by shutdown: not a worker_done
  bool ask_coordinator = false;   // worker_blocked: open a decision gate with its BLOCKERS
};

NextStep DecideNext(const DecisionInput& in);

}  // namespace conclave::domain
