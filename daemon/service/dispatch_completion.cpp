// TaskService: what happens when a worker run ends — parse, classify, apply the failure
// policy (retry, breaker, cooldown), record, tell the coordinator, free the terminal.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <random>

#include "common/clock.h"
#include "common/utf8.h"
#include "domain/backoff.h"
#include "domain/circuit_breaker.h"
#include "domain/cost.h"
#include "domain/failure_kind.h"
#include "domain/fingerprint.h"
#include "domain/worker_contract.h"
#include "exec/output_parser.h"
#include "exec/worktree_check.h"
#include "service/task_service.h"
#include "service/transcript_follower.h"

namespace conclave::service {
namespace {

constexpr size_t kMaxParsedStdout = 8 << 20;   // parse at most the last 8 MiB of stdout
constexpr size_t kMaxResultText = 64 << 10;    // stored result text is bounded

std::string ReadTail(const std::string& path, size_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  off_t size = lseek(fd, 0, SEEK_END);
  off_t start = size > static_cast<off_t>(max) ? size - static_cast<off_t>(max) : 0;
  std::string out(static_cast<size_t>(size - start), '\0');
  ssize_t n = pread(fd, out.data(), out.size(), start);
  close(fd);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return Utf8Prefix(text.substr(start, end - start + 1), 500);
}

std::string Bounded(const std::string& s) {
  if (s.size() <= kMaxResultText) return ValidUtf8(s);
  return "[... " + std::to_string(s.size() - kMaxResultText) + " bytes elided ...]\n" +
         ValidUtf8(s.substr(s.size() - kMaxResultText));
}

}  // namespace

void TaskService::OnRunFinished(int64_t dispatch_id, const exec::RunOutcome& o) {
  auto run_it = runs_.find(dispatch_id);
  double probed_cost = 0;
  if (run_it != runs_.end()) {
    probed_cost = run_it->second.running_cost;
    runs_.erase(run_it);
  }
  auto extra_it = dispatch_extras_.find(dispatch_id);
  bool reviewer_dispatch = extra_it != dispatch_extras_.end() && extra_it->second.reviewer;
  try {
    if (auto disp = core_.dispatches.Get(dispatch_id)) {
      if (auto task = core_.tasks.Get(disp->task_id)) reviewer_dispatch |= task->role == "reviewer";
    }
  } catch (const store::StoreError&) {
  }

  std::optional<store::DispatchRecord> finished;
  std::vector<int64_t> to_spawn;
  Status s = core_.batcher.Write([&]() -> Status {
    auto d = core_.dispatches.Get(dispatch_id);
    if (!d || d->state != "running") return Status::Ok();
    auto t = core_.tasks.Get(d->task_id);
    if (!t) return Status::Ok();
    const exec::Profile* p = core_.profiles.Find(d->profile);
    int64_t now = NowMs();
    d->finished_ms = now;
    d->exit_code = o.exit_code;

    using domain::FailureKind;
    FailureKind kind = FailureKind::kNone;
    std::string evidence;
    nlohmann::json result = nlohmann::json::object();
    std::string dir = DispatchDir(d->id);
    std::string stdout_text = ReadTail(dir + "/stdout.log", kMaxParsedStdout);
    exec::ParsedOutput parsed =
        exec::ParseCliOutput(p ? p->parser : "text", stdout_text, o.stderr_tail, o.exit_code);
    std::string state = "failed";

    if (o.stopped && o.stop_reason.rfind("spawn_failed", 0) == 0) {
      kind = FailureKind::kSpawnFailed;
      evidence = o.stop_reason;
    } else if (o.stopped && o.stop_reason.rfind("cancel", 0) == 0) {
      kind = FailureKind::kCancelled;
      evidence = o.stop_reason;
      state = "cancelled";
    } else if (o.stopped && o.stop_reason.rfind("budget", 0) == 0) {
      kind = FailureKind::kBudgetExceeded;
      evidence = o.stop_reason;
    } else if (o.stopped && o.stop_reason.rfind("shutdown", 0) == 0) {
      kind = FailureKind::kInterrupted;
      evidence = "daemon shut down during the run";
      state = "interrupted";
    } else if (o.hard_timeout) {
      kind = FailureKind::kTimeout;
      evidence = "hard timeout after " + std::to_string((now - d->started_ms) / 1000) + " s";
      state = "timed_out";
    } else if (o.idle_killed) {
      kind = FailureKind::kHeartbeatLost;
      evidence = "no output for " + std::to_string(p ? p->idle_timeout_s * 3 : 0) + " s";
    } else if (parsed.failure != FailureKind::kNone) {
      kind = parsed.failure;
      evidence = parsed.evidence;
    } else if (o.exit_code != 0) {
      kind = FailureKind::kNonZeroExit;
      evidence = "exit " + std::to_string(o.exit_code) +
                 (o.term_signal ? " (signal " + std::to_string(o.term_signal) + ")" : "") + ": " +
                 LastLine(o.stderr_tail.empty() ? stdout_text : o.stderr_tail);
    }

    result["text"] = Bounded(parsed.result_text);
    result["usage"] = {{"input_tokens", parsed.usage.input_tokens},
                       {"output_tokens", parsed.usage.output_tokens},
                       {"cache_read_tokens", parsed.usage.cache_read_tokens}};
    if (parsed.structured_output) result["structured_output"] = *parsed.structured_output;
    result["stdout_bytes"] = o.stdout_bytes;
    result["stderr_bytes"] = o.stderr_bytes;

    if (kind == FailureKind::kNone) {
      bool need_contract = p && p->type == "cli" && t->role != "reviewer" && !reviewer_dispatch;
      if (p && p->contract.has_value()) need_contract = *p->contract;
      if (reviewer_dispatch) need_contract = false;
      domain::WorkerContract c = domain::ParseWorkerContract(parsed.result_text);
      result["contract"] = domain::ContractToJson(c);
      if (need_contract && !c.missing.empty()) {
        kind = FailureKind::kContractViolation;
        std::string m;
        for (const auto& s : c.missing) m += (m.empty() ? "" : ", ") + s;
        evidence = "output contract broken: missing section(s) " + m;
      } else if (need_contract && (c.status == "FAIL" || c.status == "BLOCKED")) {
        kind = FailureKind::kWorkerFailed;
        std::string why = c.sections.count("BLOCKERS") ? c.sections.at("BLOCKERS") : "";
        if (why.empty() || why == "none") why = c.sections.count("SUMMARY") ? c.sections.at("SUMMARY") : "";
        evidence = "worker reported " + c.status + ": " + why.substr(0, 500);
      } else if (t->role == "writer" && !c.changed_files.empty()) {
        auto term = core_.terminals.Get(d->terminal);
        auto problems = exec::UnpersistedClaims(term ? term->cwd : ".", c.changed_files);
        if (!problems.empty()) {
          kind = FailureKind::kClaimNotPersisted;
          evidence = "written != persisted: " + problems.front();
          result["unpersisted"] = problems;
        }
      }
    }

    domain::Usage usage{parsed.usage.input_tokens, parsed.usage.output_tokens,
                        parsed.usage.cache_read_tokens};
    domain::PriceTable prices;
    try {
      if (p) prices = domain::ParsePriceTable(p->price);
    } catch (const std::exception&) {
    }
    // A cost the worker streamed while running (see OnStdout) stands in for a final report.
    std::optional<double> reported = parsed.reported_cost_usd;
    if (!reported && probed_cost > 0) reported = probed_cost;
    // DeepSeek/GLM/Kimi run the claude CLI, which prices them with Anthropic's table.
    if (p && !p->trust_reported_cost) reported.reset();
    domain::Cost cost = domain::ComputeCost(reported, usage, prices);
    d->cost_usd = cost.usd;
    d->cost_estimated = cost.estimated;
    if (kind == FailureKind::kNone && d->budget_usd > 0 && cost.usd > d->budget_usd) {
      kind = FailureKind::kBudgetExceeded;
      evidence = "cost $" + std::to_string(cost.usd) + " passed the per-dispatch cap of $" +
                 std::to_string(d->budget_usd);
    }

    d->failure_kind = kind == FailureKind::kNone ? "" : std::string(domain::FailureKindName(kind));
    d->failure_class = domain::IsOperational(kind) ? "operational"
                       : domain::IsCounted(kind)   ? "counted"
                                                   : "";
    d->evidence = Utf8Prefix(evidence, 2000);
    if (domain::IsCounted(kind)) d->fingerprint = domain::FailureFingerprint(evidence, t->hypothesis);
    if (kind == FailureKind::kNone) state = "succeeded";
    d->state = state;
    d->result = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    core_.dispatches.Update(*d);

    // Terminal: free it (or finish closing it).
    if (auto term = core_.terminals.Get(d->terminal)) {
      if (term->state == "draining") {
        core_.terminals.SetState(term->handle, "closed", 0);
        core_.handles.MarkClosed(term->handle);
      } else if (term->active_dispatch == d->id) {
        core_.terminals.SetState(term->handle, "idle", 0);
      }
    }

    // Failure policy.
    domain::BreakerState breaker{t->breaker_count, t->breaker_fp, t->blocked_reason == "circuit_open"};
    breaker = domain::FoldAttempt(breaker, {kind, d->fingerprint});
    t->breaker_count = breaker.consecutive;
    t->breaker_fp = breaker.fingerprint;
    std::string outcome = kind == FailureKind::kNone ? "succeeded" : "failed";
    std::string escalation;
    domain::BackoffPolicy policy{core_.config.retry.base_ms, core_.config.retry.max_ms,
                                 core_.config.retry.max_attempts, 0.2};
    if (t->status == "cancelled") {
      // The task was cancelled; nothing more to do.
    } else if (kind == FailureKind::kCancelled) {
      // The dispatch was stopped (terminal closed with --force) but the task lives on.
      SetTaskStatus(*t, "ready");
      escalation = "dispatch " + std::to_string(d->id) + " was stopped (" + evidence +
                   "); task " + std::to_string(t->id) + " is ready to be dispatched again";
    } else if (kind == FailureKind::kNone) {
      t->result = d->result;
      SetTaskStatus(*t, "completed");
      if (t->status == "completed") ReleaseDependants(t->id);
    } else if (kind == FailureKind::kInterrupted) {
      Requeue(*d, d->target, 0, false);
    } else if (kind == FailureKind::kAuthError) {
      t->blocked_reason = "auth_error";
      SetTaskStatus(*t, "failed");
      escalation = "authentication failed on profile " + d->profile +
                   "; retrying cannot fix a bad key. Fix the credentials, then dispatch again.";
    } else if (domain::IsOperational(kind)) {
      if (kind == FailureKind::kRateLimited) {
        int64_t wait_ms = parsed.retry_after_s ? *parsed.retry_after_s * 1000LL
                                               : domain::BackoffDelay(policy, d->op_retries + 1,
                                                                      std::random_device{}())
                                                     .count();
        core_.db.Prepare(
                "INSERT INTO cooldowns(profile, until_ms, reason) VALUES (?,?,?) "
                "ON CONFLICT(profile) DO UPDATE SET until_ms = excluded.until_ms, "
                "reason = excluded.reason")
            .Bind(1, d->profile)
            .Bind(2, now + wait_ms)
            .Bind(3, Utf8Prefix(evidence, 300))
            .Run();
      }
      if (domain::ShouldRetry(policy, kind, d->op_retries)) {
        int64_t delay = domain::BackoffDelay(policy, d->op_retries + 1, std::random_device{}()).count();
        // A handle target stays on its terminal; a group may move within the group.
        Requeue(*d, d->target, now + delay, true);
      } else {
        SetTaskStatus(*t, "failed");
        escalation = "operational failures exhausted " + std::to_string(d->op_retries + 1) +
                     " attempts (" + d->failure_kind + "): " + evidence;
      }
    } else if (breaker.open) {
      t->blocked_reason = "circuit_open";
      t->status = "blocked";
      t->updated_ms = now;
      core_.tasks.Update(*t);
      nlohmann::json ledger = nlohmann::json::array();
      for (const auto& a : core_.dispatches.ForTask(t->id)) {
        if (a.fingerprint != breaker.fingerprint) continue;
        ledger.push_back({{"dispatch_id", a.id}, {"attempt", a.attempt}, {"profile", a.profile},
                          {"terminal", a.terminal}, {"failure_kind", a.failure_kind},
                          {"evidence", a.evidence}});
      }
      nlohmann::json payload = {{"reason", "circuit_open"},
                                {"fingerprint", breaker.fingerprint},
                                {"consecutive", breaker.consecutive},
                                {"hypothesis", t->hypothesis},
                                {"attempts", ledger}};
      EmitToCoordinator(t->coordinator, "escalation", "urgent", t->id, d->id,
                        "circuit open: task " + std::to_string(t->id) + " failed " +
                            std::to_string(breaker.consecutive) +
                            " times with the same fingerprint",
                        "Stop and re-plan: change the hypothesis, scope or validation with "
                        "`conclave task update " + std::to_string(t->id) +
                            "`. Switching the model is not a re-plan.\nEvidence: " + evidence,
                        payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } else if (domain::IsCounted(kind)) {
      SetTaskStatus(*t, "ready");
      if (t->auto_retry > t->auto_retries_used && t->status == "ready") {
        t->auto_retries_used += 1;
        t->status = "dispatched";
        core_.tasks.Update(*t);
        // Attempts of one fingerprint stay on the same terminal (no silent model switch).
        Requeue(*d, d->terminal, 0, false);
      }
    } else {
      // budget_exceeded and anything unforeseen: stop here, tell the coordinator.
      t->blocked_reason = d->failure_kind;
      SetTaskStatus(*t, "failed");
      escalation = "dispatch " + std::to_string(d->id) + " stopped: " + evidence;
    }
    core_.tasks.Update(*t);

    nlohmann::json payload = {{"outcome", outcome},
                              {"state", d->state},
                              {"exit_code", d->exit_code},
                              {"duration_ms", now - d->started_ms},
                              {"failure_kind", d->failure_kind},
                              {"failure_class", d->failure_class},
                              {"fingerprint", d->fingerprint},
                              {"evidence", d->evidence},
                              {"cost_usd", d->cost_usd},
                              {"cost_estimated", d->cost_estimated},
                              {"terminal", d->terminal},
                              {"profile", d->profile},
                              {"task_status", t->status},
                              {"result", result}};
    std::string summary;
    if (result.contains("contract") && result["contract"].contains("sections")) {
      auto& secs = result["contract"]["sections"];
      if (secs.contains("SUMMARY")) summary = secs["SUMMARY"].get<std::string>();
    }
    payload["will_retry"] = t->status == "dispatched";
    if (kind == FailureKind::kInterrupted) {
      // The run did not end by itself: the daemon is stopping and re-runs it on restart.
      EmitToCoordinator(d->coordinator, "status", "high", d->task_id, d->id,
                        "dispatch " + std::to_string(d->id) + " interrupted by shutdown",
                        "re-queued; it runs again when conclaved restarts",
                        payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
      EmitToCoordinator(d->coordinator, "worker_done", outcome == "succeeded" ? "normal" : "high",
                        d->task_id, d->id,
                        "task " + std::to_string(d->task_id) + " dispatch " + std::to_string(d->id) +
                            " " + outcome + (d->failure_kind.empty() ? "" : " (" + d->failure_kind + ")"),
                        summary.empty() ? d->evidence : summary,
                        payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    if (!escalation.empty()) {
      EmitToCoordinator(d->coordinator, "escalation",
                        kind == FailureKind::kAuthError ? "urgent" : "high", d->task_id, d->id,
                        "task " + std::to_string(d->task_id) + " needs attention", escalation, "");
    }
    finished = *d;
    to_spawn = PumpLocked();
    return Status::Ok();
  });
  dispatch_extras_.erase(dispatch_id);  // a requeued attempt copied what it needs
  if (core_.transcripts) core_.transcripts->OnFinished(dispatch_id);  // transcript complete
  if (!s.ok()) {
    spdlog::error("dispatch {}: recording the outcome failed: {}", dispatch_id, s.message());
    return;
  }
  SpawnAfterCommit(to_spawn);
  if (finished && on_dispatch_finished) {
    auto rec = *finished;
    core_.batcher.AfterCommit([this, rec](bool ok) {
      if (ok && on_dispatch_finished) on_dispatch_finished(rec);
    });
  }
}

int64_t TaskService::Requeue(const store::DispatchRecord& d, const std::string& target,
                             int64_t not_before, bool count_op_retry) {
  store::DispatchRecord n;
  n.task_id = d.task_id;
  n.target = target;
  n.state = "queued";
  n.attempt = d.attempt + 1;
  n.op_retries = d.op_retries + (count_op_retry ? 1 : 0);
  n.coordinator = d.coordinator;
  n.created_ms = NowMs();
  n.not_before_ms = not_before;
  n.timeout_s = d.timeout_s;
  n.budget_usd = d.budget_usd;
  n.review_round = d.review_round;
  n.id = core_.dispatches.Insert(n);
  auto extra = dispatch_extras_.find(d.id);
  if (extra != dispatch_extras_.end()) dispatch_extras_[n.id] = extra->second;
  auto t = core_.tasks.Get(d.task_id);
  if (t && t->status != "dispatched" && t->status != "blocked") {
    t->status = "dispatched";
    t->updated_ms = NowMs();
    core_.tasks.Update(*t);
  }
  return n.id;
}

}  // namespace conclave::service
