#include "service/run_completion.h"
#include "common/loop_kick.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/json_object.h"
#include "common/random.h"
#include "common/utf8.h"
#include "domain/fingerprint.h"

namespace conclave::service {
namespace {
using domain::DispatchState;
using domain::FailureKind;
using domain::TaskState;

// A run that printed at most this much (stdout and stderr) has its facts read and parsed on
// the loop instead of in a hop to the helper pool and back, which costs two thread wake-ups —
// unless its facts need git (a writer's claimed files), which never runs on the loop: then the
// helpers gather them again.
constexpr int64_t kInlineFactsBytes = 16 << 10;

}  // namespace

void RunCompletion::OnRunFinished(int64_t dispatch_id, const exec::RunOutcome& outcome,
                                  double probed_cost, std::function<void()> recorded,
                                  std::optional<LaunchRecord> launch,
                                  std::shared_ptr<const exec::DirtyFiles> dirty_at_start) {
  auto finish = [recorded = std::move(recorded)] {
    if (recorded) recorded();
  };
  CompletionSnapshot snap;
  try {
    auto d = core_.dispatches.Get(dispatch_id);
    if (!d || d->state != DispatchState::kRunning) return finish();
    auto t = core_.tasks.Get(d->task_id);
    if (!t) {
      FailInternally(dispatch_id, "task " + std::to_string(d->task_id) + " is gone");
      return finish();
    }
    snap.dispatch = *d;
    if (launch) ApplyLaunchRecord(snap.dispatch, *launch);
    snap.task = *t;
    if (const exec::Profile* p = core_.profiles.Find(d->profile)) snap.profile = *p;
    auto term = core_.terminals.Get(d->terminal);
    snap.terminal_cwd = term ? term->cwd : ".";
    snap.git_sandbox = core_.GitSandboxFor(snap.profile ? &*snap.profile : nullptr,
                                           snap.terminal_cwd);
  } catch (const std::exception& e) {
    FailInternally(dispatch_id, e.what());
    return finish();
  }
  snap.dispatch_dir = core_.DispatchDir(dispatch_id);
  snap.now_ms = core_.clock.NowMs();
  snap.log_cap_bytes = int64_t{core_.config.transcript_cap_mib} << 20;
  snap.dirty_at_start = std::move(dirty_at_start);
  ++pending_;
  // Recorded on a later turn of the loop either way, as a run's end always was.
  auto record = [this, dispatch_id, outcome, finish, launch](
                    std::shared_ptr<const CompletionFacts> facts, const std::string& error) {
    --pending_;
    if (!error.empty() || !facts) {
      FailInternally(dispatch_id, error.empty() ? "gathering the run's facts failed" : error);
    } else {
      Record(dispatch_id, outcome, facts, launch);
    }
    finish();
  };
  if (outcome.stdout_bytes + outcome.stderr_bytes <= kInlineFactsBytes) {
    std::optional<CompletionFacts> facts;
    try {
      facts = GatherFactsWithoutCommands(snap, outcome, probed_cost, kInlineFactsBytes);
    } catch (...) {
      // Gathered again on the helpers below, which report the error.
    }
    if (facts) {
      auto shared = std::make_shared<const CompletionFacts>(std::move(*facts));
      PostToLoop(core_.io, [record, shared] { record(shared, ""); });
      return;
    }
  }
  // Reading and parsing up to 8 MiB and running git must not hold the loop.
  boost::asio::post(core_.helpers, [this, snap, outcome, probed_cost, record] {
    // Shared, not copied: the facts hold up to 8 MiB of answer text, and every copy made on
    // the loop (the hop back, the retry closures) would hold it up.
    std::shared_ptr<const CompletionFacts> facts;
    std::string error;
    try {
      facts = std::make_shared<const CompletionFacts>(
          GatherFacts(snap, outcome, probed_cost, core_.commands));
    } catch (const std::exception& e) {
      error = e.what();
    }
    PostToLoop(core_.io,
                      [record, facts = std::move(facts), error] { record(facts, error); });
  });
}

void RunCompletion::Record(int64_t dispatch_id, const exec::RunOutcome& outcome,
                           std::shared_ptr<const CompletionFacts> shared,
                           const std::optional<LaunchRecord>& launch) {
  const CompletionFacts& facts = *shared;
  std::vector<int64_t> to_start;
  std::optional<domain::Dispatch> finished;
  std::string finished_role;  // only the role: a task's brief may be a MiB
  Status s = core_.batcher.Write([&]() -> Status {
    auto d = core_.dispatches.Get(dispatch_id);
    if (!d || d->state != DispatchState::kRunning) return Status::Ok();
    auto t = core_.tasks.Get(d->task_id);
    if (!t) return Internal("task " + std::to_string(d->task_id) + " is gone");
    if (launch) ApplyLaunchRecord(*d, *launch);
    domain::Classification c = domain::ClassifyOutcome(facts.run, facts.output, facts.contract,
                                                       facts.cost.usd, d->budget_usd);
    if (Status a = Apply(*d, *t, facts, c, &to_start); !a.ok()) return a;
    finished = *d;
    finished_role = t->role;
    return Status::Ok();
  });
  auto retry = [this, dispatch_id, outcome, shared, launch] {
    Record(dispatch_id, outcome, shared, launch);
  };
  if (!s.ok()) {
    if (!core_.batcher.Refusal().ok()) return core_.batcher.WhenWritable(retry);
    spdlog::error("dispatch {}: recording the outcome failed: {}", dispatch_id, s.message());
    return FailInternally(dispatch_id, s.message());
  }
  AfterRecorded(to_start, std::move(finished), std::move(finished_role), retry);
}

void RunCompletion::AfterRecorded(const std::vector<int64_t>& to_start,
                                  std::optional<domain::Dispatch> done,
                                  std::string task_role, std::function<void()> retry) {
  scheduler_.StartAfterCommit(to_start);
  // Live followers get their last chunk after this commit (TranscriptFollower defers it).
  if (done && transcripts_) transcripts_->OnFinished(done->id);
  core_.batcher.AfterCommit([this, done = std::move(done), task_role = std::move(task_role),
                             retry](bool ok) {
    if (!ok) return core_.batcher.WhenWritable(retry);  // a full disk rolled it back: again
    if (!done) return;
    for (auto* l : listeners_) l->OnDispatchFinished(*done, task_role);
  });
}

Status RunCompletion::Apply(domain::Dispatch& d, domain::Task& t, const CompletionFacts& facts,
                            const domain::Classification& c, std::vector<int64_t>* to_start) {
  ApplyToDispatch(d, t, facts, c);
  if (Status s = domain::MoveDispatch(d, c.state); !s.ok()) return s;
  core_.dispatches.Update(d);
  terminals_.ReleaseAfterRun(d.terminal, d.id);
  domain::NextStep next = Decide(d, t, facts, c);
  if (next.cooldown_until_ms) {
    core_.cooldowns.Put({d.profile, *next.cooldown_until_ms, Utf8Prefix(c.evidence, 300)});
  }
  if (Status s = ApplyToTask(d, t, next); !s.ok()) return s;
  EmitOutcome(d, t, facts, next);
  if (next.ask_coordinator && gates_ && t.status == TaskState::kBlocked) {
    const auto& said = facts.contract.contract.sections;
    auto b = said.find("BLOCKERS");
    gates_->AskForBlockedTask(t, d.id, b == said.end() ? "" : b->second);
  }
  if (next.breaker_opened) EmitBreakerOpen(d, t, next);
  *to_start = scheduler_.PumpLocked();
  return Status::Ok();
}

void RunCompletion::ApplyToDispatch(domain::Dispatch& d, const domain::Task& t,
                                    const CompletionFacts& facts, const domain::Classification& c) {
  d.finished_ms = core_.clock.NowMs();
  d.exit_code = facts.run.exit_code;
  d.cost_usd = facts.cost.usd;
  d.cost_estimated = facts.cost.estimated;
  d.failure_kind = c.kind == FailureKind::kNone ? "" : std::string(domain::FailureKindName(c.kind));
  d.failure_class = domain::FailureClassName(c.kind);
  d.evidence = Utf8Prefix(c.evidence, 2000);
  if (domain::IsCounted(c.kind)) d.fingerprint = domain::FailureFingerprint(c.evidence, t.hypothesis);
  if (c.kind == FailureKind::kClaimNotPersisted) {
    nlohmann::json result = facts.result;
    result["unpersisted"] = facts.contract.unpersisted;
    d.result = DumpJson(result);
  } else {
    d.result = facts.result_text;
  }
}

domain::NextStep RunCompletion::Decide(const domain::Dispatch& d, const domain::Task& t,
                                       const CompletionFacts& facts,
                                       const domain::Classification& c) {
  domain::DecisionInput in;
  in.task_id = t.id;
  in.dispatch_id = d.id;
  in.profile = d.profile;
  in.task_status = t.status;
  in.task_held_by_gate = t.HeldByGate();
  in.auto_retry = t.auto_retry;
  in.auto_retries_used = t.auto_retries_used;
  in.breaker = {t.breaker_count, t.breaker_fp, t.blocked_reason == "circuit_open"};
  in.outcome = c;
  in.fingerprint = d.fingerprint;
  const auto& r = core_.config.retry;
  in.retry = {r.base_ms, r.max_ms, r.max_attempts, 0.2};
  // A reviewer round's retries are bounded on their own, so a hung or crashed reviewer turns
  // its review gate-absent within attempts x deadline (issue 12 item 2).
  if (t.role == "reviewer") {
    in.retry.max_attempts = std::min(in.retry.max_attempts, core_.config.review.round_max_attempts);
  }
  in.op_retries = d.op_retries;
  if (facts.parsed.retry_after_s) {
    // A provider's hint is capped (config retry_after_cap_s, default 1 h).
    in.retry_after_ms = std::clamp<int64_t>(int64_t{*facts.parsed.retry_after_s} * 1000, 0,
                                            int64_t{core_.config.retry_after_cap_s} * 1000);
  }
  in.random_bits[0] = RandomU64();
  in.random_bits[1] = RandomU64();
  in.now_ms = core_.clock.NowMs();
  return domain::DecideNext(in);
}

Status RunCompletion::ApplyToTask(domain::Dispatch& d, domain::Task& t,
                                  const domain::NextStep& next) {
  t.breaker_count = next.breaker.consecutive;
  t.breaker_fp = next.breaker.fingerprint;
  if (next.completed) t.result = d.result;
  if (next.auto_retry_used) t.auto_retries_used += 1;
  if (next.task_status) {
    Status s = domain::SetTaskStatus(t, *next.task_status, core_.clock.NowMs(), next.task_reason);
    if (!s.ok()) return s;
  }
  core_.tasks.Update(t);
  if (t.status == TaskState::kFailed) tasks_.BlockDependants(t);
  if (next.requeue == domain::Requeue::kSameTarget) {
    std::string target = d.target;
    if (swap_ && d.failure_class == "operational") {
      if (auto other = swap_->SwapTarget(d, t)) target = *other;
    }
    scheduler_.Requeue(d, target, next.requeue_not_before_ms, next.count_op_retry);
  } else if (next.requeue == domain::Requeue::kSameTerminal) {
    scheduler_.Requeue(d, d.terminal, next.requeue_not_before_ms, next.count_op_retry);
  }
  if (next.completed && t.status == TaskState::kCompleted) tasks_.ReleaseDependants(t.id);
  if (auto fresh = core_.tasks.Get(t.id)) t = *fresh;
  return Status::Ok();
}

void RunCompletion::EmitOutcome(const domain::Dispatch& d, const domain::Task& t,
                                const CompletionFacts& facts, const domain::NextStep& next) {
  bool ok = d.failure_kind.empty();
  std::string outcome(domain::OutcomeName(ok));
  // d.result is the DumpJson text the facts carried (ApplyToDispatch): spliced in as it is.
  JsonObject payload;
  payload.Add("outcome", outcome).Add("state", domain::DispatchStateName(d.state));
  payload.Add("exit_code", d.exit_code).Add("duration_ms", d.finished_ms - d.started_ms);
  payload.Add("failure_kind", d.failure_kind).Add("failure_class", d.failure_class);
  payload.Add("fingerprint", d.fingerprint).Add("evidence", d.evidence);
  payload.Add("cost_usd", d.cost_usd).Add("cost_estimated", d.cost_estimated);
  payload.Add("terminal", d.terminal).Add("profile", d.profile);
  payload.Add("task_status", domain::TaskStateName(t.status));
  payload.Add("will_retry", t.status == TaskState::kDispatched);
  payload.AddRaw("result", d.result);
  const auto& sections = facts.contract.contract.sections;
  auto summary = sections.find("SUMMARY");
  std::string id = std::to_string(d.id), tid = std::to_string(d.task_id);
  if (next.report_as_status) {
    // The run did not end by itself: the daemon is stopping and re-runs it on restart.
    core_.Notify({d.coordinator, "status", "high", d.task_id, d.id,
                  "dispatch " + id + " interrupted by shutdown",
                  "re-queued; it runs again when conclaved restarts",
                  payload.Dump()});
  } else {
    core_.Notify({d.coordinator, "worker_done", ok ? "normal" : "high", d.task_id, d.id,
                  "task " + tid + " dispatch " + id + " " + outcome +
                      (d.failure_kind.empty() ? "" : " (" + d.failure_kind + ")"),
                  summary != sections.end() && !summary->second.empty() ? summary->second
                                                                         : d.evidence,
                  payload.Dump()});
  }
  if (!next.escalation.empty()) {
    core_.Notify({d.coordinator, "escalation", next.escalation_priority, d.task_id, d.id,
                  "task " + tid + " needs attention", next.escalation, ""});
  }
}

void RunCompletion::EmitBreakerOpen(const domain::Dispatch& d, const domain::Task& t,
                                    const domain::NextStep& next) {
  nlohmann::json ledger = nlohmann::json::array();
  for (const auto& a : core_.dispatches.ForTask(t.id)) {
    if (a.fingerprint != next.breaker.fingerprint) continue;
    ledger.push_back({{"dispatch_id", a.id}, {"attempt", a.attempt}, {"profile", a.profile},
                      {"terminal", a.terminal}, {"failure_kind", a.failure_kind},
                      {"evidence", a.evidence}});
  }
  nlohmann::json payload = {{"reason", "circuit_open"},
                            {"fingerprint", next.breaker.fingerprint},
                            {"consecutive", next.breaker.consecutive},
                            {"hypothesis", t.hypothesis},
                            {"attempts", ledger}};
  std::string tid = std::to_string(t.id);
  core_.Notify({t.coordinator, "escalation", "urgent", t.id, d.id,
                "circuit open: task " + tid + " failed " +
                    std::to_string(next.breaker.consecutive) + " times with the same fingerprint",
                "Stop and re-plan: change the hypothesis, scope or validation with "
                "`conclave task update " + tid + "`. Switching the model is not a re-plan.\n"
                "Evidence: " + d.evidence,
                DumpJson(payload)});
}

void RunCompletion::FailInternally(int64_t dispatch_id, const std::string& error) {
  std::vector<int64_t> to_start;
  Status s = core_.batcher.Write([&]() -> Status {
    auto d = core_.dispatches.Get(dispatch_id);
    if (!d || domain::DispatchEnded(d->state)) return Status::Ok();
    if (Status m = domain::MoveDispatch(*d, DispatchState::kFailed); !m.ok()) return m;
    d->finished_ms = core_.clock.NowMs();
    d->failure_kind = std::string(domain::FailureKindName(FailureKind::kInternalError));
    d->failure_class = "operational";
    d->evidence = Utf8Prefix("internal error while recording the outcome: " + error, 2000);
    core_.dispatches.Update(*d);
    terminals_.ReleaseAfterRun(d->terminal, d->id);
    std::string status;
    if (auto t = core_.tasks.Get(d->task_id)) {
      if (tasks_.SetStatus(*t, TaskState::kFailed, "internal_error").ok()) {
        status = std::string(domain::TaskStateName(t->status));
      }
    }
    nlohmann::json payload = {{"outcome", std::string(domain::OutcomeName(false))},
                              {"state", std::string(domain::DispatchStateName(d->state))},
                              {"failure_kind", d->failure_kind}, {"failure_class", "operational"},
                              {"evidence", d->evidence}, {"task_status", status},
                              {"will_retry", false}};
    std::string id = std::to_string(d->id);
    core_.Notify({d->coordinator, "worker_done", "high", d->task_id, d->id,
                  "task " + std::to_string(d->task_id) + " dispatch " + id + " failed (internal_error)",
                  d->evidence, DumpJson(payload)});
    core_.Notify({d->coordinator, "escalation", "urgent", d->task_id, d->id,
                  "dispatch " + id + ": conclaved could not record its outcome", d->evidence, ""});
    to_start = scheduler_.PumpLocked();
    return Status::Ok();
  });
  if (!s.ok()) {
    spdlog::critical("dispatch {}: could not even record the internal error: {}", dispatch_id,
                     s.message());
    return;
  }
  scheduler_.StartAfterCommit(to_start);
  if (transcripts_) transcripts_->OnFinished(dispatch_id);
}

}  // namespace conclave::service
