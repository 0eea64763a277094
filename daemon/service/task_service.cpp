#include "service/task_service.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "domain/circuit_breaker.h"

namespace conclave::service {
namespace {
constexpr size_t kMaxBriefBytes = 1 << 20;
constexpr size_t kMaxTitleBytes = 512;
constexpr size_t kMaxFieldBytes = 64 << 10;
using domain::TaskState;

bool IsKnownRole(const std::string& r) {
  return r == "writer" || r == "reviewer" || r == "planner" || r == "tester" ||
         r == "researcher" || r == "stage";
}

Status ValidateNewTask(domain::Task& t) {
  if (t.brief.empty()) return InvalidArgument("brief: required (a file, or - for stdin)");
  if (t.brief.size() > kMaxBriefBytes) {
    return InvalidArgument("brief: " + std::to_string(t.brief.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxBriefBytes));
  }
  if (t.title.size() > kMaxTitleBytes) return InvalidArgument("title: longer than 512 bytes");
  for (const std::string* f : {&t.hypothesis, &t.scope, &t.validation}) {
    if (f->size() > kMaxFieldBytes) {
      return InvalidArgument("hypothesis/scope/validation: longer than 64 KiB");
    }
  }
  if (t.role.empty()) t.role = "writer";
  if (!IsKnownRole(t.role)) {
    return InvalidArgument("role: '" + t.role +
                           "' is not one of writer, reviewer, planner, tester, researcher, stage");
  }
  if (t.auto_retry < 0 || t.auto_retry > 20) {
    return InvalidArgument("auto_retry: must be between 0 and 20");
  }
  if (t.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
  return Status::Ok();
}
}  // namespace

TaskView TaskService::View(const domain::Task& t) {
  return {t, core_.tasks.Deps(t.id), core_.spend.Task(t.id)};
}

Status TaskService::SetStatus(domain::Task& t, TaskState to, std::string reason) {
  Status s = domain::SetTaskStatus(t, to, core_.clock.NowMs(), std::move(reason));
  if (!s.ok()) return s;
  core_.tasks.Update(t);
  if (t.status == TaskState::kFailed || t.status == TaskState::kCancelled) BlockDependants(t);
  return Status::Ok();
}

void TaskService::Create(CreateTaskInput in, Done<CreateTaskResult> done) {
  WriteThen<CreateTaskResult>(
      core_,
      [&]() -> StatusOr<CreateTaskResult> {
        domain::Task& t = in.task;
        if (!t.idem_key.empty()) {
          if (t.idem_key.size() > 256) return InvalidArgument("key: longer than 256 bytes");
          if (auto existing = core_.tasks.GetByKey(t.idem_key)) {
            return CreateTaskResult{View(*existing), true};
          }
        }
        if (Status v = ValidateNewTask(t); !v.ok()) return v;
        if (t.coordinator.empty()) t.coordinator = "coordinator";
        if (!core_.handles.Get(t.coordinator)) {
          return NotFound("coordinator: no handle named '" + t.coordinator +
                          "' (register it with `conclave handle register`)");
        }
        if (t.title.empty()) t.title = t.brief.substr(0, t.brief.find('\n')).substr(0, 80);
        std::sort(in.deps.begin(), in.deps.end());
        in.deps.erase(std::unique(in.deps.begin(), in.deps.end()), in.deps.end());
        int unmet = 0;
        for (int64_t dep : in.deps) {
          auto d = core_.tasks.Get(dep);
          if (!d) return NotFound("deps: task " + std::to_string(dep) + " does not exist");
          if (d->status != TaskState::kCompleted) ++unmet;
        }
        t.unmet_deps = unmet;
        t.status = unmet ? TaskState::kPending : TaskState::kReady;
        t.created_ms = t.updated_ms = core_.clock.NowMs();
        t.id = core_.tasks.Insert(t);
        for (int64_t dep : in.deps) core_.tasks.AddDep(t.id, dep);
        return CreateTaskResult{View(t), false};
      },
      std::move(done));
}

std::vector<TaskView> TaskService::List(std::optional<TaskState> status, int limit) {
  std::vector<TaskView> out;
  std::string name = status ? std::string(domain::TaskStateName(*status)) : "";
  for (const auto& t : core_.tasks.List(name, limit <= 0 ? 1000 : std::min(limit, 10000))) {
    out.push_back(View(t));
  }
  return out;
}

StatusOr<TaskDetailResult> TaskService::Get(int64_t id) {
  auto t = core_.tasks.Get(id);
  if (!t) return NotFound("id: task " + std::to_string(id) + " does not exist");
  TaskDetailResult r;
  r.task = View(*t);
  r.dispatches = core_.dispatches.ForTask(id);
  // A run's pid reaches the store with its outcome or after a second (RunSupervisor); shown
  // from the live run meanwhile.
  if (runs_ && !r.dispatches.empty() && r.dispatches.back().pid == 0 &&
      r.dispatches.back().state == domain::DispatchState::kRunning) {
    auto live = runs_->LivenessOf({id});
    if (!live.empty() && live[0].dispatch_id == r.dispatches.back().id) {
      r.dispatches.back().pid = live[0].pid;
    }
  }
  domain::MessageFilter f;
  f.task_ids = {id};
  r.events = core_.messages.Newest(f, 20);
  r.gates = core_.gates.List(false, id);
  return r;
}

StatusOr<TaskDetailResult> TaskService::GetFor(const domain::Caller& caller, int64_t id) {
  if (caller.IsWorker() && (caller.role != domain::CallerRole::kWorker || id != caller.task_id)) {
    std::string why = "a worker may read only its own task (" + std::to_string(caller.task_id) + ")";
    return refusals_ ? refusals_->Refuse(caller, domain::Rpc::kGetTask, why) : PermissionDenied(why);
  }
  return Get(id);
}

namespace {
constexpr const char* kDependencyFailed = "dependency_failed";

bool BlockedByDependency(const domain::Task& t) {
  return t.status == TaskState::kBlocked && t.blocked_reason == kDependencyFailed;
}
}  // namespace

void TaskService::BlockDependants(const domain::Task& failed) {
  std::vector<std::pair<int64_t, int64_t>> queue;  // (dependant, the dependency it waits on)
  for (int64_t id : core_.tasks.Dependants(failed.id)) queue.emplace_back(id, failed.id);
  while (!queue.empty()) {
    auto [id, on] = queue.back();
    queue.pop_back();
    auto d = core_.tasks.Get(id);
    // Only a task still waiting for its dependencies: a gate-held one waits for its gate.
    if (!d || d->status != TaskState::kPending || d->unmet_deps <= 0) continue;
    if (!domain::SetTaskStatus(*d, TaskState::kBlocked, core_.clock.NowMs(), kDependencyFailed)
             .ok()) {
      continue;
    }
    core_.tasks.Update(*d);
    std::string why = on == failed.id
                          ? "task " + std::to_string(failed.id) + " " +
                                std::string(domain::TaskStateName(failed.status)) +
                                (failed.blocked_reason.empty() ? "" : " (" + failed.blocked_reason + ")")
                          : "task " + std::to_string(on) + " is blocked (dependency_failed)";
    core_.Notify({d->coordinator, "escalation", "high", d->id, 0,
                  "task " + std::to_string(d->id) + " is blocked: a dependency failed",
                  "task " + std::to_string(d->id) + " depends on " + why +
                      "; it cannot run. Dispatch the dependency again (it resumes when the "
                      "dependency completes) or cancel this task.",
                  nlohmann::json{{"reason", kDependencyFailed}, {"dependency", on}}.dump()});
    for (int64_t next : core_.tasks.Dependants(d->id)) queue.emplace_back(next, d->id);
  }
}

void TaskService::ReleaseDependants(int64_t task_id) {
  for (int64_t dep_id : core_.tasks.Dependants(task_id)) {
    auto d = core_.tasks.Get(dep_id);
    if (!d || d->unmet_deps <= 0) continue;
    d->unmet_deps -= 1;
    // Its failed dependency ran again and completed: it waits again (ready below when
    // nothing else is missing) unless another dependency is still failed.
    bool unblocked = BlockedByDependency(*d) && !DependencyFailed(d->id) &&
                     domain::SetTaskStatus(*d, TaskState::kPending, core_.clock.NowMs()).ok();
    if (d->unmet_deps == 0 && d->HeldByGate() && d->resume_status == TaskState::kPending) {
      d->resume_status = TaskState::kReady;  // the gate holds it; ready when it resolves
    }
    if (d->unmet_deps == 0 && d->status == TaskState::kPending) {
      (void)domain::SetTaskStatus(*d, TaskState::kReady, core_.clock.NowMs());
      core_.Notify({d->coordinator, "status", "normal", d->id, 0,
                    "task " + std::to_string(d->id) + " is ready",
                    "all dependencies of task " + std::to_string(d->id) + " completed", ""});
    }
    d->updated_ms = core_.clock.NowMs();
    core_.tasks.Update(*d);
    if (unblocked) UnblockWaiting(d->id);
  }
}

bool TaskService::DependencyFailed(int64_t task_id) {
  for (int64_t dep : core_.tasks.Deps(task_id)) {
    auto x = core_.tasks.Get(dep);
    if (x && (x->status == TaskState::kFailed || x->status == TaskState::kCancelled ||
              BlockedByDependency(*x))) {
      return true;
    }
  }
  return false;
}

void TaskService::UnblockWaiting(int64_t task_id) {
  for (int64_t id : core_.tasks.Dependants(task_id)) {
    auto d = core_.tasks.Get(id);
    if (!d || !BlockedByDependency(*d) || DependencyFailed(id)) continue;
    if (!domain::SetTaskStatus(*d, d->unmet_deps == 0 ? TaskState::kReady : TaskState::kPending,
                               core_.clock.NowMs())
             .ok()) {
      continue;
    }
    core_.tasks.Update(*d);
    UnblockWaiting(id);
  }
}

void TaskService::Update(const TaskUpdateInput& in, Done<TaskView> done) {
  WriteThen<TaskView>(
      core_,
      [&]() -> StatusOr<TaskView> {
        auto t = core_.tasks.Get(in.id);
        if (!t) return NotFound("id: task " + std::to_string(in.id) + " does not exist");
        auto apply = [](std::string& field, const std::optional<std::string>& v) {
          if (!v || *v == field) return false;
          field = *v;
          return true;
        };
        if (in.brief && in.brief->empty()) return InvalidArgument("brief: must not be empty");
        if (in.auto_retry && (*in.auto_retry < 0 || *in.auto_retry > 20)) {
          return InvalidArgument("auto_retry: must be between 0 and 20");
        }
        if (in.budget_usd && *in.budget_usd < 0) {
          return InvalidArgument("budget_usd: must not be negative");
        }
        domain::PlanChange change;
        apply(t->title, in.title);
        bool brief_changed = apply(t->brief, in.brief);
        change.hypothesis_changed = apply(t->hypothesis, in.hypothesis);
        change.scope_changed = apply(t->scope, in.scope) || brief_changed;
        change.validation_changed = apply(t->validation, in.validation);
        if (in.auto_retry) t->auto_retry = *in.auto_retry;
        if (in.budget_usd) t->budget_usd = *in.budget_usd;
        bool closed_breaker = false;
        if (domain::IsReplan(change)) {
          domain::BreakerState state{t->breaker_count, t->breaker_fp,
                                     t->blocked_reason == "circuit_open"};
          state = domain::ApplyPlanChange(state, change);
          t->breaker_count = state.consecutive;
          t->breaker_fp = state.fingerprint;
          if (t->status == TaskState::kBlocked && t->blocked_reason == "circuit_open") {
            if (Status s = domain::SetTaskStatus(*t, TaskState::kReady, core_.clock.NowMs()); !s.ok()) {
              return s;
            }
            closed_breaker = true;
          }
          t->auto_retries_used = 0;
        }
        t->updated_ms = core_.clock.NowMs();
        core_.tasks.Update(*t);
        if (closed_breaker) {
          core_.Notify({t->coordinator, "status", "normal", t->id, 0,
                        "task " + std::to_string(t->id) + " re-planned: breaker closed",
                        "the task may be dispatched again", ""});
        }
        return View(*t);
      },
      std::move(done));
}

void TaskService::Cancel(int64_t id, const std::string& reason, Done<TaskView> done) {
  std::vector<int64_t> to_stop;
  WriteThen<TaskView>(
      core_,
      [&]() -> StatusOr<TaskView> {
        auto t = core_.tasks.Get(id);
        if (!t) return NotFound("id: task " + std::to_string(id) + " does not exist");
        if (t->Finished()) {
          return FailedPrecondition("task " + std::to_string(id) + " is already " +
                                    std::string(domain::TaskStateName(t->status)));
        }
        for (auto& d : core_.dispatches.ForTask(id)) {
          if (d.state == domain::DispatchState::kQueued) {
            if (Status s = domain::MoveDispatch(d, domain::DispatchState::kCancelled); !s.ok()) return s;
            d.failure_kind = domain::FailureKindName(domain::FailureKind::kCancelled);
            d.finished_ms = core_.clock.NowMs();
            core_.dispatches.Update(d);
          } else if (d.state == domain::DispatchState::kRunning) {
            to_stop.push_back(d.id);
          }
        }
        if (Status s = SetStatus(*t, TaskState::kCancelled,
                                 reason.empty() ? "cancelled by coordinator" : reason);
            !s.ok()) {
          return s;
        }
        core_.Notify({t->coordinator, "status", "normal", t->id, 0,
                      "task " + std::to_string(id) + " cancelled", t->blocked_reason, ""});
        return View(*t);
      },
      std::move(done));
  for (int64_t d : to_stop) {
    if (runs_) runs_->StopRun(d, domain::StopReason::kCancelled, "cancel: task cancelled");
  }
}

}  // namespace conclave::service
