#include "service/gate_service.h"

#include <nlohmann/json.hpp>

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
        if (!g->task_id) return *g;
        auto t = core_.tasks.Get(g->task_id);
        if (!t || !t->HeldByGate()) return *g;
        auto open = core_.gates.List(true, t->id);
        if (Status s = domain::ReleaseTaskFromGate(*t, open.empty() ? 0 : open.front().id, now);
            !s.ok()) {
          return s;
        }
        core_.tasks.Update(*t);
        if (t->status == domain::TaskState::kCompleted) tasks_.ReleaseDependants(t->id);
        core_.Notify({t->coordinator, "status", "normal", t->id, 0,
                      "gate " + std::to_string(id) + " resolved: " + decision,
                      "task " + std::to_string(t->id) + " is now " +
                          std::string(domain::TaskStateName(t->status)),
                      ""});
        return *g;
      },
      std::move(done));
  if (pump_) pump_->Pump();
}

std::vector<domain::Gate> GateService::List(bool open_only, int64_t task_id) {
  return core_.gates.List(open_only, task_id);
}

}  // namespace conclave::service
