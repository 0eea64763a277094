// TaskService: creating, listing, updating and cancelling tasks; decision gates.
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "domain/circuit_breaker.h"
#include "service/task_service.h"

namespace conclave::service {
namespace {
constexpr size_t kMaxBriefBytes = 1 << 20;
constexpr size_t kMaxTitleBytes = 512;
constexpr size_t kMaxFieldBytes = 64 << 10;

bool IsKnownRole(const std::string& r) {
  return r == "writer" || r == "reviewer" || r == "planner" || r == "tester" ||
         r == "researcher" || r == "stage";
}
}  // namespace

void TaskService::CreateTask(CreateTaskInput in, Done<CreateTaskResult> done) {
  WriteThen<CreateTaskResult>(
      core_,
      [&]() -> StatusOr<CreateTaskResult> {
        store::TaskRecord& t = in.task;
        if (!t.idem_key.empty()) {
          if (t.idem_key.size() > 256) return InvalidArgument("key: longer than 256 bytes");
          if (auto existing = core_.tasks.GetByKey(t.idem_key)) {
            return CreateTaskResult{*existing, true};
          }
        }
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
                                 "' is not one of writer, reviewer, planner, tester, "
                                 "researcher, stage");
        }
        if (t.auto_retry < 0 || t.auto_retry > 20) {
          return InvalidArgument("auto_retry: must be between 0 and 20");
        }
        if (t.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
        if (t.coordinator.empty()) t.coordinator = "coordinator";
        if (!core_.handles.Get(t.coordinator)) {
          return NotFound("coordinator: no handle named '" + t.coordinator +
                          "' (register it with `conclave handle register`)");
        }
        if (t.title.empty()) {
          std::string first = t.brief.substr(0, t.brief.find('\n'));
          t.title = first.substr(0, 80);
        }
        std::sort(in.deps.begin(), in.deps.end());
        in.deps.erase(std::unique(in.deps.begin(), in.deps.end()), in.deps.end());
        int unmet = 0;
        for (int64_t dep : in.deps) {
          auto d = core_.tasks.Get(dep);
          if (!d) {
            return NotFound("deps: task " + std::to_string(dep) + " does not exist");
          }
          if (d->status != "completed") ++unmet;
        }
        t.unmet_deps = unmet;
        t.status = unmet ? "pending" : "ready";
        t.created_ms = t.updated_ms = NowMs();
        t.id = core_.tasks.Insert(t);
        for (int64_t dep : in.deps) core_.tasks.AddDep(t.id, dep);
        return CreateTaskResult{t, false};
      },
      std::move(done));
}

std::vector<store::TaskRecord> TaskService::ListTasks(const std::string& status, int limit) {
  return core_.tasks.List(status, limit <= 0 ? 1000 : std::min(limit, 10000));
}

StatusOr<TaskDetailResult> TaskService::GetTask(int64_t id) {
  auto t = core_.tasks.Get(id);
  if (!t) return NotFound("id: task " + std::to_string(id) + " does not exist");
  TaskDetailResult r;
  r.task = *t;
  r.dispatches = core_.dispatches.ForTask(id);
  domain::MessageFilter f;
  f.task_ids = {id};
  r.events = core_.messages.Newest(f, 20);
  r.gates = core_.gates.List(false, id);
  return r;
}

void TaskService::SetTaskStatus(store::TaskRecord& t, const std::string& status) {
  // While a decision gate holds the task, outcomes land in resume_status.
  if (t.status == "blocked" && t.blocked_reason.rfind("gate:", 0) == 0 && status != "cancelled") {
    t.resume_status = status;
  } else {
    t.status = status;
    if (status != "blocked") t.blocked_reason.clear();
  }
  t.updated_ms = NowMs();
  core_.tasks.Update(t);
}

void TaskService::ReleaseDependants(int64_t task_id) {
  for (int64_t dep_id : core_.tasks.Dependants(task_id)) {
    auto d = core_.tasks.Get(dep_id);
    if (!d || d->unmet_deps <= 0) continue;
    d->unmet_deps -= 1;
    if (d->unmet_deps == 0 && d->status == "blocked" && d->resume_status == "pending") {
      d->resume_status = "ready";  // a gate holds it; it becomes ready when the gate resolves
    }
    if (d->unmet_deps == 0 && d->status == "pending") {
      d->status = "ready";
      EmitToCoordinator(d->coordinator, "status", "normal", d->id, 0,
                        "task " + std::to_string(d->id) + " is ready",
                        "all dependencies of task " + std::to_string(d->id) + " completed", "");
    }
    d->updated_ms = NowMs();
    core_.tasks.Update(*d);
  }
}

void TaskService::UpdateTask(const TaskUpdateInput& in, Done<store::TaskRecord> done) {
  bool closed_breaker = false;
  WriteThen<store::TaskRecord>(
      core_,
      [&]() -> StatusOr<store::TaskRecord> {
        auto t = core_.tasks.Get(in.id);
        if (!t) return NotFound("id: task " + std::to_string(in.id) + " does not exist");
        domain::PlanChange change;
        auto apply = [](std::string& field, const std::optional<std::string>& v) {
          if (!v || *v == field) return false;
          field = *v;
          return true;
        };
        if (in.brief && in.brief->empty()) return InvalidArgument("brief: must not be empty");
        apply(t->title, in.title);
        bool brief_changed = apply(t->brief, in.brief);
        change.hypothesis_changed = apply(t->hypothesis, in.hypothesis);
        change.scope_changed = apply(t->scope, in.scope) || brief_changed;
        change.validation_changed = apply(t->validation, in.validation);
        if (in.auto_retry) {
          if (*in.auto_retry < 0 || *in.auto_retry > 20) {
            return InvalidArgument("auto_retry: must be between 0 and 20");
          }
          t->auto_retry = *in.auto_retry;
        }
        if (in.budget_usd) {
          if (*in.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
          t->budget_usd = *in.budget_usd;
        }
        domain::BreakerState state{t->breaker_count, t->breaker_fp,
                                   t->blocked_reason == "circuit_open"};
        if (domain::IsReplan(change)) {
          state = domain::ApplyPlanChange(state, change);
          t->breaker_count = state.consecutive;
          t->breaker_fp = state.fingerprint;
          if (t->status == "blocked" && t->blocked_reason == "circuit_open") {
            t->status = "ready";
            t->blocked_reason.clear();
            closed_breaker = true;
          }
          t->auto_retries_used = 0;
        }
        t->updated_ms = NowMs();
        core_.tasks.Update(*t);
        if (closed_breaker) {
          EmitToCoordinator(t->coordinator, "status", "normal", t->id, 0,
                            "task " + std::to_string(t->id) + " re-planned: breaker closed",
                            "the task may be dispatched again", "");
        }
        return *t;
      },
      std::move(done));
}

void TaskService::CancelTask(int64_t id, const std::string& reason, Done<store::TaskRecord> done) {
  std::vector<int64_t> to_stop;
  WriteThen<store::TaskRecord>(
      core_,
      [&]() -> StatusOr<store::TaskRecord> {
        auto t = core_.tasks.Get(id);
        if (!t) return NotFound("id: task " + std::to_string(id) + " does not exist");
        if (t->status == "completed" || t->status == "cancelled") {
          return FailedPrecondition("task " + std::to_string(id) + " is already " + t->status);
        }
        for (auto& d : core_.dispatches.ForTask(id)) {
          if (d.state == "queued") {
            d.state = "cancelled";
            d.failure_kind = "cancelled";
            d.finished_ms = NowMs();
            core_.dispatches.Update(d);
          } else if (d.state == "running") {
            to_stop.push_back(d.id);
          }
        }
        t->status = "cancelled";
        t->blocked_reason = reason.empty() ? "cancelled by coordinator" : reason;
        t->updated_ms = NowMs();
        core_.tasks.Update(*t);
        EmitToCoordinator(t->coordinator, "status", "normal", t->id, 0,
                          "task " + std::to_string(id) + " cancelled", t->blocked_reason, "");
        return *t;
      },
      std::move(done));
  for (int64_t d : to_stop) {
    auto it = runs_.find(d);
    if (it != runs_.end()) it->second.run->Stop("cancel: task cancelled");
  }
}

void TaskService::CreateGate(int64_t task_id, const std::string& question,
                             const std::vector<std::string>& options, int64_t review_id,
                             Done<store::GateRecord> done) {
  WriteThen<store::GateRecord>(
      core_,
      [&]() -> StatusOr<store::GateRecord> {
        if (question.empty()) return InvalidArgument("question: required");
        if (question.size() > kMaxFieldBytes) return InvalidArgument("question: longer than 64 KiB");
        std::optional<store::TaskRecord> t;
        if (task_id) {
          t = core_.tasks.Get(task_id);
          if (!t) return NotFound("task: task " + std::to_string(task_id) + " does not exist");
          if (t->status == "completed" || t->status == "cancelled") {
            return FailedPrecondition("task: task " + std::to_string(task_id) + " is already " +
                                      t->status);
          }
        } else if (!review_id) {
          return InvalidArgument("task: a gate needs a task");
        }
        store::GateRecord g;
        g.task_id = task_id;
        g.review_id = review_id;
        g.question = question;
        g.options = nlohmann::json(options).dump();
        g.created_ms = NowMs();
        g.id = core_.gates.Insert(g);
        std::string coordinator = t ? t->coordinator : "coordinator";
        if (t) {
          if (!(t->status == "blocked" && t->blocked_reason.rfind("gate:", 0) == 0)) {
            t->resume_status = t->status;
            t->status = "blocked";
            t->blocked_reason = "gate:" + std::to_string(g.id);
            t->updated_ms = NowMs();
            core_.tasks.Update(*t);
          }
        }
        nlohmann::json payload = {{"gate_id", g.id}, {"options", options}};
        if (review_id) payload["review_id"] = review_id;
        EmitToCoordinator(coordinator, "decision_gate", "high", task_id, 0,
                          "decision needed (gate " + std::to_string(g.id) + ")", question,
                          payload.dump());
        return g;
      },
      std::move(done));
}

void TaskService::ResolveGate(int64_t id, const std::string& decision,
                              Done<store::GateRecord> done) {
  bool released = false;
  WriteThen<store::GateRecord>(
      core_,
      [&]() -> StatusOr<store::GateRecord> {
        auto g = core_.gates.Get(id);
        if (!g) return NotFound("id: gate " + std::to_string(id) + " does not exist");
        if (g->status != "open") {
          return FailedPrecondition("gate " + std::to_string(id) + " is already resolved (" +
                                    g->decision + ")");
        }
        if (decision.empty()) return InvalidArgument("decision: required");
        auto opts = nlohmann::json::parse(g->options, nullptr, false);
        if (opts.is_array() && !opts.empty()) {
          bool ok = false;
          for (const auto& o : opts) ok |= o.is_string() && o.get<std::string>() == decision;
          if (!ok) {
            return InvalidArgument("decision: '" + decision + "' is not one of the gate's options " +
                                   g->options);
          }
        }
        core_.gates.Resolve(id, decision, NowMs());
        g->status = "resolved";
        g->decision = decision;
        g->resolved_ms = NowMs();
        if (g->task_id) {
          auto t = core_.tasks.Get(g->task_id);
          if (t && t->status == "blocked" && t->blocked_reason.rfind("gate:", 0) == 0) {
            auto open = core_.gates.List(true, t->id);
            if (open.empty()) {
              t->status = t->resume_status.empty() ? "ready" : t->resume_status;
              t->resume_status.clear();
              t->blocked_reason.clear();
              released = t->status == "completed";
            } else {
              t->blocked_reason = "gate:" + std::to_string(open.front().id);
            }
            t->updated_ms = NowMs();
            core_.tasks.Update(*t);
            if (released) ReleaseDependants(t->id);
            EmitToCoordinator(t->coordinator, "status", "normal", t->id, 0,
                              "gate " + std::to_string(id) + " resolved: " + decision,
                              "task " + std::to_string(t->id) + " is now " + t->status, "");
          }
        }
        return *g;
      },
      std::move(done));
  Pump();
}

std::vector<store::GateRecord> TaskService::ListGates(bool open_only, int64_t task_id) {
  return core_.gates.List(open_only, task_id);
}

}  // namespace conclave::service
