#include "service/dispatch_scheduler.h"

#include <spdlog/spdlog.h>

#include "common/hash.h"
#include "common/json_object.h"
#include "common/random.h"
#include "domain/flow.h"

namespace conclave::service {
using domain::DispatchState;
using domain::TaskState;
using domain::TerminalState;

Status DispatchScheduler::CheckDispatchable(const domain::Task& t) {
  const std::string id = std::to_string(t.id);
  switch (t.status) {
    case TaskState::kPending: {
      std::string deps;
      for (int64_t dep : core_.tasks.Deps(t.id)) {
        auto d = core_.tasks.Get(dep);
        if (d && d->status != TaskState::kCompleted) {
          deps += (deps.empty() ? "" : ", ") + std::to_string(dep);
        }
      }
      return FailedPrecondition("task " + id + " is pending: dependencies not completed: " + deps);
    }
    case TaskState::kBlocked:
      if (t.blocked_reason == "circuit_open") {
        return FailedPrecondition(
            "task " + id + " is blocked: circuit open after " + std::to_string(t.breaker_count) +
            " consecutive failures with fingerprint " + t.breaker_fp +
            "; re-plan it (`conclave task update " + id +
            " --hypothesis H | --scope S | --validation V`) — switching the model is not a re-plan");
      }
      return FailedPrecondition("task " + id + " is blocked (" + t.blocked_reason +
                                "); resolve that first (`conclave gate list`)");
    case TaskState::kDispatched:
      return FailedPrecondition("task " + id +
                                " is already dispatched; wait for its worker_done or cancel it");
    case TaskState::kCompleted:
    case TaskState::kCancelled:
      return FailedPrecondition("task " + id + " is already " +
                                std::string(domain::TaskStateName(t.status)));
    default:
      return Status::Ok();
  }
}

bool DispatchScheduler::InFlowWorktree(const domain::Terminal& t) const {
  return core_.InFlowWorktree(t.cwd);
}

StatusOr<std::vector<std::string>> DispatchScheduler::ResolveTarget(const std::string& to) {
  std::vector<std::string> out;
  if (to != "@idle") {
    auto members = messaging_.ResolveAddress(to, "");
    if (!members.ok() || to.empty() || to[0] != '@') return members;
    out = std::move(members.value());
  } else {
    // "@idle" queues for whichever open terminal frees up first.
    for (const auto& t : core_.terminals.List(false)) out.push_back(t.handle);
    if (out.empty()) return NotFound("to: there are no worker terminals");
  }
  // A group never reaches into a flow's worktree: one writer per worktree, the flow's own.
  std::vector<std::string> open;
  for (auto& h : out) {
    auto term = core_.terminals.Get(h);
    if (domain::FlowOfTerminal(h) != 0 || (term && InFlowWorktree(*term))) continue;
    open.push_back(std::move(h));
  }
  if (open.empty()) {
    return NotFound("to: '" + to + "' names only terminals of flows, which take only their flow's work");
  }
  return open;
}

Status DispatchScheduler::CheckFlowTerminal(const domain::Task& t, const std::string& to) const {
  if (to.empty() || to[0] == '@') return Status::Ok();
  if (int64_t flow = domain::FlowOfTerminal(to); flow != 0) {
    if (domain::IsFlowTask(flow, t.idem_key)) return Status::Ok();
    return FailedPrecondition("to: terminal '" + to + "' belongs to flow " + std::to_string(flow) +
                              " and takes only that flow's steps");
  }
  auto term = core_.terminals.Get(to);
  if (term && t.role == "writer" && InFlowWorktree(*term)) {
    return FailedPrecondition("to: terminal '" + to + "' works in a flow's worktree (" + term->cwd +
                              "); only the flow's own writer may write there");
  }
  return Status::Ok();
}

StatusOr<std::string> DispatchScheduler::CheckTarget(const std::string& to) {
  auto members = ResolveTarget(to);
  if (!members.ok()) return members.status();
  bool group = to[0] == '@';
  std::string family;
  int open = 0;
  for (const auto& h : members.value()) {
    auto term = core_.terminals.Get(h);
    if (!term) continue;
    if (domain::TerminalRefusesWork(term->state)) {
      if (!group) {
        return FailedPrecondition("to: terminal '" + h + "' is " +
                                  std::string(domain::TerminalStateName(term->state)) +
                                  " and takes no new work");
      }
      continue;
    }
    if (!core_.profiles.Find(term->profile)) {
      if (!group) {
        return FailedPrecondition("to: terminal '" + h + "' uses profile '" + term->profile +
                                  "', which is not loaded");
      }
      continue;
    }
    ++open;
    family = core_.FamilyOf(*term);
  }
  if (open == 0) {
    return NotFound("to: '" + to + "' names no open worker terminal (create one with "
                    "`conclave terminal create --profile P`)");
  }
  return group ? std::string() : family;
}

void DispatchScheduler::Dispatch(const DispatchInput& in, Done<domain::Dispatch> done) {
  if (stopping_) return done(Unavailable("conclaved is shutting down"));
  std::vector<int64_t> to_start;
  int64_t new_id = 0;
  Status s = core_.batcher.Write([&]() -> Status {
    auto t = core_.tasks.Get(in.task_id);
    if (!t) return NotFound("task: task " + std::to_string(in.task_id) + " does not exist");
    if (Status ok = CheckDispatchable(*t); !ok.ok()) return ok;
    if (in.timeout_s < 0) return InvalidArgument("timeout_s: must not be negative");
    if (in.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
    auto family = CheckTarget(in.to);
    if (!family.ok()) return family.status();
    if (Status owned = CheckFlowTerminal(*t, in.to); !owned.ok()) return owned;
    if (Status b = budgets_.Check(*t, family.value()); !b.ok()) return b;
    domain::Dispatch d;
    d.task_id = t->id;
    d.target = in.to;
    auto previous = core_.dispatches.ForTask(t->id);
    d.attempt = previous.empty() ? 1 : previous.back().attempt + 1;
    d.coordinator = in.from.empty() ? t->coordinator : in.from;
    if (!core_.handles.Get(d.coordinator)) {
      return NotFound("from: no handle named '" + d.coordinator + "'");
    }
    d.created_ms = core_.clock.NowMs();
    d.timeout_s = in.timeout_s;
    d.budget_usd = in.budget_usd > 0 ? in.budget_usd : core_.config.budgets.per_dispatch_usd;
    d.review_round = in.review_round;
    t->last_target = in.to;
    if (Status st = tasks_.SetStatus(*t, TaskState::kDispatched); !st.ok()) return st;
    to_start = PumpLocked(&d);  // inserts d
    new_id = d.id;
    return Status::Ok();
  });
  if (!s.ok()) return done(s);
  // The reply is the dispatch as committed, filled in first; the launches this commit allows
  // are prepared on the loop (the plan) and handed to the launcher's thread next, and the reply
  // is sent last, so the spawn starts while the reply goes out. The reply waits for that
  // preparation, never for a spawn.
  auto reply = std::make_shared<StatusOr<domain::Dispatch>>(
      Internal("dispatch could not be read after its commit"));
  core_.batcher.AfterCommit([this, new_id, reply](bool ok) {
    if (!ok) {
      *reply = core_.batcher.Refusal().ok() ? Unavailable("dispatch could not be committed")
                                            : core_.batcher.Refusal();
    } else if (auto d = core_.dispatches.Get(new_id)) {
      *reply = *d;
    }
  });
  StartAfterCommit(to_start);
  core_.batcher.AfterCommit([reply, done = std::move(done)](bool) { done(std::move(*reply)); });
}

std::vector<store::CooldownRecord> DispatchScheduler::Cooldowns() {
  return core_.cooldowns.AllActive(core_.clock.NowMs());
}

std::vector<domain::Terminal> DispatchScheduler::Candidates(const domain::Dispatch& d) {
  std::vector<domain::Terminal> out;
  auto members = ResolveTarget(d.target);
  if (!members.ok()) return out;
  for (const auto& h : members.value()) {
    if (auto t = core_.terminals.Get(h)) out.push_back(*t);
  }
  return out;
}

bool DispatchScheduler::DropIfNoTerminal(domain::Dispatch& d, domain::Task& task,
                                         const std::vector<domain::Terminal>& candidates,
                                         int64_t now) {
  for (const auto& t : candidates) {
    if (t.state != TerminalState::kClosed && t.state != TerminalState::kDraining) return false;
  }
  if (!domain::MoveDispatch(d, DispatchState::kCancelled).ok()) return false;
  d.failure_kind = domain::FailureKindName(domain::FailureKind::kCancelled);
  d.evidence = "no open terminal left for " + d.target;
  d.finished_ms = now;
  Save(d);
  (void)tasks_.SetStatus(task, TaskState::kReady);
  core_.Notify({d.coordinator, "escalation", "high", d.task_id, d.id,
                "dispatch " + std::to_string(d.id) + " dropped from the queue",
                d.evidence + "; task " + std::to_string(d.task_id) +
                    " is ready to be dispatched elsewhere",
                ""});
  return true;
}

bool DispatchScheduler::WriterRunsIn(const std::string& cwd) {
  // Empty for shared directories without --exclusive: they behave as before. One query, not
  // a list of every terminal per candidate.
  for (int64_t id : core_.terminals.RunningInExclusiveDir(cwd)) {
    auto d = core_.dispatches.Get(id);
    auto task = d ? core_.tasks.Get(d->task_id) : std::nullopt;
    if (task && task->role == "writer") return true;
  }
  return false;
}

const domain::Terminal* DispatchScheduler::ChooseTerminal(
    const std::vector<domain::Terminal>& candidates, const domain::Task& task, int64_t now,
    int64_t* wake_at) {
  for (const auto& t : candidates) {
    if (t.state != TerminalState::kIdle) continue;
    // One writer at a time in an --exclusive terminal's directory; it waits in the queue.
    if (task.role == "writer" && WriterRunsIn(t.cwd)) continue;
    const exec::Profile* p = core_.profiles.Find(t.profile);
    if (!p) continue;
    if (auto cooling = core_.cooldowns.Active(p->name, now)) {
      if (*wake_at == 0 || cooling->until_ms < *wake_at) *wake_at = cooling->until_ms;
      continue;
    }
    if (core_.dispatches.CountRunningForProfile(p->name) >= p->max_concurrent) continue;
    return &t;
  }
  return nullptr;
}

Status DispatchScheduler::StartRunning(domain::Dispatch& d, domain::Task& task,
                                       const domain::Terminal& term, const exec::Profile& profile,
                                       int64_t now) {
  // The task's remaining budget caps this run too (passed to the CLI, enforced by the daemon).
  double remaining = budgets_.TaskRemaining(task);
  if (remaining > 0 && (d.budget_usd <= 0 || remaining < d.budget_usd)) d.budget_usd = remaining;
  if (Status s = domain::MoveDispatch(d, DispatchState::kRunning); !s.ok()) return s;
  d.terminal = term.handle;
  d.profile = profile.name;
  d.family = profile.family;
  // The worker gets the token; the store keeps only its hash (useless to a reader of the
  // database, and stale once the dispatch ends).
  std::string token = RandomHex(24);
  d.token = Sha256Hex(token);
  d.started_ms = now;
  d.last_output_ms = now;
  int timeout = d.timeout_s > 0 ? d.timeout_s : profile.timeout_s;
  d.deadline_ms = now + timeout * 1000LL;
  Save(d);
  fresh_tokens_[d.id] = token;
  domain::Terminal busy = term;
  if (Status s = terminals_.Move(busy, TerminalState::kBusy, d.id); !s.ok()) return s;
  JsonObject payload;
  payload.Add("dispatch_id", d.id).Add("terminal", d.terminal).Add("profile", d.profile);
  payload.Add("family", d.family).Add("attempt", d.attempt).Add("deadline_unix_ms", d.deadline_ms);
  core_.Notify({d.coordinator, "dispatch", "normal", d.task_id, d.id,
                "task " + std::to_string(d.task_id) + " dispatched to " + d.terminal,
                "attempt " + std::to_string(d.attempt) + " on " + d.terminal + " (" + d.profile +
                    ", " + d.family + ")",
                payload.Dump()});
  return Status::Ok();
}

void DispatchScheduler::Save(domain::Dispatch& d) {
  if (d.id == 0) {
    d.id = core_.dispatches.Insert(d);
  } else {
    core_.dispatches.Update(d);
  }
}

std::vector<int64_t> DispatchScheduler::PumpLocked(domain::Dispatch* fresh) {
  if (stopping_ && !fresh) return {};
  auto queue = core_.dispatches.InState(DispatchState::kQueued);
  // The new dispatch is the newest: last, where its id would have put it.
  if (fresh) queue.push_back(*fresh);
  std::vector<int64_t> started = stopping_ ? std::vector<int64_t>{} : RunQueue(queue);
  if (fresh) {
    // Whatever path the new one took, it is in the store now: still queued if it did not start.
    if (queue.back().id == 0) Save(queue.back());
    *fresh = queue.back();
  }
  return started;
}

std::vector<int64_t> DispatchScheduler::RunQueue(std::vector<domain::Dispatch>& queue) {
  std::vector<int64_t> started;
  int64_t now = core_.clock.NowMs();
  int64_t wake_at = 0;
  for (auto& d : queue) {
    if (d.not_before_ms > now) {
      if (wake_at == 0 || d.not_before_ms < wake_at) wake_at = d.not_before_ms;
      continue;
    }
    auto task = core_.tasks.Get(d.task_id);
    if (!task) continue;
    auto candidates = Candidates(d);
    if (DropIfNoTerminal(d, *task, candidates, now)) continue;
    const domain::Terminal* chosen = ChooseTerminal(candidates, *task, now, &wake_at);
    if (!chosen) continue;
    const exec::Profile* profile = core_.profiles.Find(chosen->profile);
    if (Status budget = budgets_.Check(*task, profile->family); !budget.ok()) {
      // The cap was reached while this dispatch waited: refuse it now, visibly.
      if (!domain::MoveDispatch(d, DispatchState::kFailed).ok()) continue;
      d.failure_kind = "budget_exceeded";
      d.evidence = budget.message();
      d.finished_ms = now;
      Save(d);
      (void)tasks_.SetStatus(*task, TaskState::kFailed);
      core_.Notify({d.coordinator, "escalation", "high", d.task_id, d.id,
                    "dispatch " + std::to_string(d.id) + " refused: budget", budget.message(), ""});
      continue;
    }
    if (StartRunning(d, *task, *chosen, *profile, now).ok()) started.push_back(d.id);
  }
  if (wake_at) ScheduleWake(wake_at);
  return started;
}

void DispatchScheduler::Pump() {
  std::vector<int64_t> ids;
  Status s = core_.batcher.Write([&]() -> Status {
    ids = PumpLocked();
    return Status::Ok();
  });
  if (!s.ok()) {
    spdlog::error("scheduling failed: {}", s.message());
    core_.batcher.WhenWritable([this] { Pump(); });
    return;
  }
  StartAfterCommit(ids);
}

void DispatchScheduler::ScheduleWake(int64_t at_ms) {
  int64_t now = core_.clock.NowMs();
  if (wake_ && wake_at_ms_ != 0 && wake_at_ms_ <= at_ms && wake_at_ms_ > now) return;
  wake_at_ms_ = at_ms;
  wake_ = core_.clock.Schedule(at_ms + 5, [this] {
    wake_at_ms_ = 0;
    Pump();
  });
}

void DispatchScheduler::StartAfterCommit(const std::vector<int64_t>& ids) {
  if (ids.empty()) return;
  std::vector<std::pair<int64_t, std::string>> runs;
  for (int64_t id : ids) {
    auto it = fresh_tokens_.find(id);
    runs.emplace_back(id, it == fresh_tokens_.end() ? "" : it->second);
    if (it != fresh_tokens_.end()) fresh_tokens_.erase(it);
  }
  core_.batcher.AfterCommit([this, runs](bool ok) {
    if (!ok) {
      // Rolled back to queued: run the queue again once writes land.
      core_.batcher.WhenWritable([this] { Pump(); });
      return;
    }
    if (starter_) starter_->StartRuns(runs);
  });
}

int64_t DispatchScheduler::Requeue(const domain::Dispatch& d, const std::string& target,
                                   int64_t not_before_ms, bool count_op_retry) {
  domain::Dispatch n;
  n.task_id = d.task_id;
  n.target = target;
  n.attempt = d.attempt + 1;
  n.op_retries = d.op_retries + (count_op_retry ? 1 : 0);
  n.coordinator = d.coordinator;
  n.created_ms = core_.clock.NowMs();
  n.not_before_ms = not_before_ms;
  n.timeout_s = d.timeout_s;
  n.budget_usd = d.budget_usd;
  n.review_round = d.review_round;
  n.id = core_.dispatches.Insert(n);
  auto t = core_.tasks.Get(d.task_id);
  if (t && t->status != TaskState::kDispatched && t->status != TaskState::kBlocked) {
    (void)tasks_.SetStatus(*t, TaskState::kDispatched);
  }
  return n.id;
}

void DispatchScheduler::Stop() {
  stopping_ = true;
  wake_.reset();
}

}  // namespace conclave::service
