#include "service/gate_service.h"

#include <nlohmann/json.hpp>

#include "common/utf8.h"

namespace conclave::service {
namespace {
constexpr size_t kMaxQuestionBytes = 64 << 10;
}  // namespace

void GateService::Create(int64_t task_id, const std::string& question,
                         const std::vector<std::string>& options, int64_t review_id,
                         Done<domain::Gate> done) {
  WriteThen<domain::Gate>(
      core_,
      [&]() -> StatusOr<domain::Gate> {
        if (question.empty()) return InvalidArgument("question: required");
        if (question.size() > kMaxQuestionBytes) {
          return InvalidArgument("question: longer than 64 KiB");
        }
        std::optional<domain::Task> t;
        if (task_id) {
          t = core_.tasks.Get(task_id);
          if (!t) return NotFound("task: task " + std::to_string(task_id) + " does not exist");
          if (t->Finished()) {
            return FailedPrecondition("task: task " + std::to_string(task_id) + " is already " +
                                      std::string(domain::TaskStateName(t->status)));
          }
        } else if (!review_id) {
          return InvalidArgument("task: a gate needs a task");
        }
        domain::Gate g;
        g.task_id = task_id;
        g.review_id = review_id;
        g.question = question;
        g.options = nlohmann::json(options).dump();
        g.created_ms = core_.clock.NowMs();
        g.id = core_.gates.Insert(g);
        if (t) {
          if (Status s = domain::HoldTaskForGate(*t, g.id, core_.clock.NowMs()); !s.ok()) return s;
          core_.tasks.Update(*t);
        }
        nlohmann::json payload = {{"gate_id", g.id}, {"options", options}};
        if (review_id) payload["review_id"] = review_id;
        core_.Notify({t ? t->coordinator : "coordinator", "decision_gate", "high", task_id, 0,
                      "decision needed (gate " + std::to_string(g.id) + ")", question,
                      payload.dump()});
        return g;
      },
      std::move(done));
}

domain::Gate GateService::InsertForReview(int64_t review_id, const std::string& question,
                                          const std::string& options_json) {
  domain::Gate g;
  g.review_id = review_id;
  g.question = question;
  g.options = options_json;
  g.created_ms = core_.clock.NowMs();
  g.id = core_.gates.Insert(g);
  return g;
}

void GateService::Resolve(int64_t id, const std::string& decision,
                          const domain::CallerIdentity& caller, const std::string& reason,
                          Done<domain::Gate> done) {
  WriteThen<domain::Gate>(
      core_,
      [&]() -> StatusOr<domain::Gate> {
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
        int64_t now = core_.clock.NowMs();
        core_.gates.Resolve(id, decision, now);
        g->status = "resolved";
        g->decision = decision;
        g->resolved_ms = now;
        if (g->review_id && reviews_) {
          if (Status s = reviews_->OnReviewGateResolved(*g, caller, reason); !s.ok()) return s;
        }
        if (g->flow_id && flows_) {
          if (Status s = flows_->OnFlowGateResolved(*g, reason); !s.ok()) return s;
        }
        if (!g->task_id) return *g;
        auto t = core_.tasks.Get(g->task_id);
        if (t && t->status == domain::TaskState::kBlocked && t->blocked_reason == "worker_blocked" &&
            core_.gates.List(true, t->id).empty()) {
          AnswerBlockedTask(*t, *g, reason);
          return *g;
        }
        if (!t || !t->HeldByGate()) return *g;
        auto open = core_.gates.List(true, t->id);
        if (Status s = domain::ReleaseTaskFromGate(*t, open.empty() ? 0 : open.front().id, now);
            !s.ok()) {
          return s;
        }
        core_.tasks.Update(*t);
        if (t->status == domain::TaskState::kCompleted) tasks_.ReleaseDependants(t->id);
        if (t->status == domain::TaskState::kFailed) tasks_.BlockDependants(*t);
        core_.Notify({t->coordinator, "status", "normal", t->id, 0,
                      "gate " + std::to_string(id) + " resolved: " + decision,
                      "task " + std::to_string(t->id) + " is now " +
                          std::string(domain::TaskStateName(t->status)),
                      ""});
        return *g;
      },
      std::move(done));
  if (scheduler_) scheduler_->Pump();
}

domain::Gate GateService::AskForBlockedTask(const domain::Task& t, int64_t dispatch_id,
                                           const std::string& blockers) {
  // The worker's words are stored in the gate too: redacted like every message.
  std::string said = Utf8Prefix(
      core_.redactor.Apply(blockers.empty() ? "(no BLOCKERS section)" : blockers), 8000);
  domain::Gate g;
  g.task_id = t.id;
  g.question = "The worker of task " + std::to_string(t.id) + " (dispatch " +
               std::to_string(dispatch_id) + ") is blocked and asks:\n" + said +
               "\n\nAnswer with `conclave gate resolve <id> --decision '<your answer>'`: the "
               "answer is added to the task's brief and the task is dispatched again.";
  g.options = "[]";
  g.created_ms = core_.clock.NowMs();
  g.id = core_.gates.Insert(g);
  nlohmann::json payload = {{"gate_id", g.id},
                            {"options", nlohmann::json::array()},
                            {"reason", "worker_blocked"},
                            {"blockers", said}};
  core_.Notify({t.coordinator, "decision_gate", "high", t.id, dispatch_id,
                "task " + std::to_string(t.id) + " is blocked: its worker asks (gate " +
                    std::to_string(g.id) + ")",
                g.question, payload.dump()});
  return g;
}

void GateService::AnswerBlockedTask(domain::Task& t, const domain::Gate& g,
                                    const std::string& reason) {
  int64_t now = core_.clock.NowMs();
  t.brief += "\n\n## Answer to your BLOCKERS (gate " + std::to_string(g.id) + ")\n" + g.decision;
  if (!reason.empty()) t.brief += "\n" + reason;
  t.brief += "\n";
  (void)domain::SetTaskStatus(t, domain::TaskState::kReady, now);
  core_.tasks.Update(t);
  auto runs = core_.dispatches.ForTask(t.id);
  std::string where = "ready to be dispatched";
  if (!runs.empty() && scheduler_) {
    // Re-queued where it last ran: the same terminal or group, a fresh attempt.
    const domain::Dispatch& last = runs.back();
    int64_t id = scheduler_->Requeue(last, last.target, now, false);
    where = "re-queued as dispatch " + std::to_string(id) + " to " + last.target;
  }
  core_.Notify({t.coordinator, "status", "normal", t.id, 0,
                "gate " + std::to_string(g.id) + " answered: task " + std::to_string(t.id) + " " +
                    where,
                "the answer was added to the task's brief", ""});
}

std::vector<domain::Gate> GateService::List(bool open_only, int64_t task_id) {
  return core_.gates.List(open_only, task_id);
}

}  // namespace conclave::service
