#include "domain/outcome.h"

namespace conclave::domain {
namespace {

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Checks that only apply to a run that ended cleanly: the contract, then the claims.
Classification CheckContract(const ContractFacts& c) {
  Classification r;
  if (c.reviewer && !c.contract.changed_files.empty()) {
    r.kind = FailureKind::kContractViolation;
    r.evidence = "a reviewer claimed changes (reviewers change nothing): " +
                 Joined(c.contract.changed_files);
  } else if (c.required && !c.contract.missing.empty()) {
    r.kind = FailureKind::kContractViolation;
    r.evidence = "output contract broken: missing section(s) " + Joined(c.contract.missing);
  } else if (c.required && (c.contract.status == "FAIL" || c.contract.status == "BLOCKED")) {
    // FAIL is a counted failure; BLOCKED is a question for the coordinator (seed 001:
    // "Blocked → ask"), never counted toward the breaker.
    r.kind = c.contract.status == "BLOCKED" ? FailureKind::kWorkerBlocked : FailureKind::kWorkerFailed;
    const auto& s = c.contract.sections;
    std::string why = s.count("BLOCKERS") ? s.at("BLOCKERS") : "";
    if (why.empty() || why == "none") why = s.count("SUMMARY") ? s.at("SUMMARY") : "";
    r.evidence = "worker reported " + c.contract.status + ": " + why.substr(0, 500);
  } else if (c.writer && !c.contract.changed_files.empty() && !c.unpersisted.empty()) {
    r.kind = FailureKind::kClaimNotPersisted;
    r.evidence = "written != persisted: " + c.unpersisted.front();
  }
  return r;
}

Classification FromStop(const RunFacts& run) {
  Classification r;
  r.state = DispatchState::kFailed;
  r.evidence = run.stop_detail;
  switch (run.stop) {
    case StopReason::kSpawnFailed:
      r.kind = FailureKind::kSpawnFailed;
      break;
    case StopReason::kCancelled:
      r.kind = FailureKind::kCancelled;
      r.state = DispatchState::kCancelled;
      break;
    case StopReason::kBudget:
      r.kind = FailureKind::kBudgetExceeded;
      break;
    case StopReason::kShutdown:
      r.kind = FailureKind::kInterrupted;
      r.evidence = "daemon shut down during the run";
      r.state = DispatchState::kInterrupted;
      break;
    case StopReason::kNone:
      break;
  }
  return r;
}

}  // namespace

std::string_view OutcomeName(bool succeeded) { return succeeded ? "succeeded" : "failed"; }

std::string FailureClassName(FailureKind kind) {
  if (IsOperational(kind)) return "operational";
  if (IsCounted(kind)) return "counted";
  return "";
}

Classification ClassifyOutcome(const RunFacts& run, const OutputFacts& out,
                               const ContractFacts& contract, double cost_usd, double budget_usd) {
  if (run.stop != StopReason::kNone) return FromStop(run);
  Classification r;
  r.state = DispatchState::kFailed;
  if (run.hard_timeout) {
    r.kind = FailureKind::kTimeout;
    r.evidence = "hard timeout after " + std::to_string(run.duration_ms / 1000) + " s";
    r.state = DispatchState::kTimedOut;
    return r;
  }
  if (run.idle_killed) {
    r.kind = FailureKind::kHeartbeatLost;
    r.evidence = "no output for " + std::to_string(run.idle_kill_s) + " s";
    return r;
  }
  if (out.parsed_failure != FailureKind::kNone) {
    r.kind = out.parsed_failure;
    r.evidence = out.parsed_evidence;
    return r;
  }
  if (run.exit_code != 0) {
    r.kind = FailureKind::kNonZeroExit;
    r.evidence = "exit " + std::to_string(run.exit_code) +
                 (run.term_signal ? " (signal " + std::to_string(run.term_signal) + ")" : "") +
                 ": " + run.last_line;
    return r;
  }
  r = CheckContract(contract);
  if (r.kind == FailureKind::kNone && budget_usd > 0 && cost_usd > budget_usd) {
    r.kind = FailureKind::kBudgetExceeded;
    r.evidence = "cost $" + std::to_string(cost_usd) + " passed the per-dispatch cap of $" +
                 std::to_string(budget_usd);
  }
  r.state = r.kind == FailureKind::kNone ? DispatchState::kSucceeded : DispatchState::kFailed;
  return r;
}

namespace {

void DecideOperational(const DecisionInput& in, NextStep& n) {
  FailureKind kind = in.outcome.kind;
  if (kind == FailureKind::kRateLimited) {
    int64_t wait = in.retry_after_ms
                       ? *in.retry_after_ms
                       : BackoffDelay(in.retry, in.op_retries + 1, in.random_bits[0]).count();
    n.cooldown_until_ms = in.now_ms + wait;
  }
  if (ShouldRetry(in.retry, kind, in.op_retries)) {
    // A handle target stays on its terminal; a group may move within the group.
    n.requeue = Requeue::kSameTarget;
    n.requeue_not_before_ms =
        in.now_ms + BackoffDelay(in.retry, in.op_retries + 1, in.random_bits[1]).count();
    n.count_op_retry = true;
    return;
  }
  n.task_status = TaskState::kFailed;
  n.escalation = "operational failures exhausted " + std::to_string(in.op_retries + 1) +
                 " attempts (" + std::string(FailureKindName(kind)) + "): " + in.outcome.evidence;
}

}  // namespace

NextStep DecideNext(const DecisionInput& in) {
  NextStep n;
  FailureKind kind = in.outcome.kind;
  n.breaker = FoldAttempt(in.breaker, {kind, in.fingerprint});
  const std::string did = std::to_string(in.dispatch_id), tid = std::to_string(in.task_id);
  if (in.task_status == TaskState::kCancelled) return n;  // nothing more to do
  if (kind == FailureKind::kCancelled) {
    // The dispatch was stopped (terminal closed with --force) but the task lives on.
    n.task_status = TaskState::kReady;
    n.escalation = "dispatch " + did + " was stopped (" + in.outcome.evidence + "); task " + tid +
                   " is ready to be dispatched again";
  } else if (kind == FailureKind::kNone) {
    n.task_status = TaskState::kCompleted;
    n.completed = true;
  } else if (kind == FailureKind::kInterrupted) {
    n.requeue = Requeue::kSameTarget;
    n.report_as_status = true;
  } else if (kind == FailureKind::kAuthError) {
    n.task_status = TaskState::kFailed;
    n.task_reason = "auth_error";
    n.escalation = "authentication failed on profile " + in.profile +
                   "; retrying cannot fix a bad key. Fix the credentials, then dispatch again.";
    n.escalation_priority = "urgent";
  } else if (IsOperational(kind)) {
    DecideOperational(in, n);
  } else if (kind == FailureKind::kWorkerBlocked) {
    // Blocked → ask: the task waits on a decision gate carrying the worker's BLOCKERS;
    // resolving the gate re-queues it with the answer added to the brief.
    n.task_status = TaskState::kBlocked;
    n.task_reason = "worker_blocked";
    n.ask_coordinator = true;
  } else if (n.breaker.open) {
    n.task_status = TaskState::kBlocked;
    n.task_reason = "circuit_open";
    n.breaker_opened = true;
  } else if (IsCounted(kind)) {
    n.task_status = TaskState::kReady;
    if (in.auto_retry > in.auto_retries_used && !in.task_held_by_gate) {
      // Attempts of one fingerprint stay on the same terminal (no silent model switch).
      n.auto_retry_used = true;
      n.task_status = TaskState::kDispatched;
      n.requeue = Requeue::kSameTerminal;
    }
  } else {
    // budget_exceeded and anything unforeseen: stop here, tell the coordinator.
    n.task_status = TaskState::kFailed;
    n.task_reason = std::string(FailureKindName(kind));
    n.escalation = "dispatch " + did + " stopped: " + in.outcome.evidence;
  }
  return n;
}

}  // namespace conclave::domain
