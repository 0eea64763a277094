// FlowService, a person's decisions and the writer swap: a stopped flow reopened by its
// decision gate or by a sign-off of the review that stopped it (Reopen), and seed 001's
// swap of a writer in operational trouble for another of its family (SwapTarget).
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <spdlog/spdlog.h>

#include "common/utf8.h"
#include "service/flow_service.h"
#include "service/flow_support.h"

namespace conclave::service {
using domain::FlowStep;

void FlowService::OnReviewFinished(int64_t review_id) {
  auto f = store_.ByReview(review_id);
  if (!f) return;
  if (f->status == "running" && f->step == FlowStep::kReview) return Advance(f->id);
  // Only the review of the round that stopped: after another round its old gate decides
  // nothing about the new head.
  if (f->step != FlowStep::kNeedsHuman || f->review_id != review_id || f->review_round != f->round) {
    return;
  }
  // Stopped at this review (gate-absent, stalemate) and a person signed it off: ready. Never
  // shipped by the daemon: a sign-off is not an APPROVED review.
  auto r = reviews_.Get(review_id);
  if (!r.ok() || r->review.verdict != "APPROVED_BY_SIGNOFF") return;
  Reopen(f->id, [&](domain::Flow& fl) {
    return Move(fl, FlowStep::kReady,
                "review " + std::to_string(review_id) + " was signed off by a person "
                "(APPROVED_BY_SIGNOFF). Branch " + fl.branch + " is ready; merge it with: git -C " +
                    fl.repo + " merge --ff-only " + fl.branch);
  });
}

Status FlowService::OnFlowGateResolved(const domain::Gate& g, const std::string& reason) {
  // Inside the gate's write: the decision and the flow's move commit together (a crash or a
  // full disk cannot leave the gate resolved and the flow stopped).
  const int64_t id = g.flow_id, gate = g.id;
  if (cleaning_.count(id)) {
    return FailedPrecondition("flow " + std::to_string(id) +
                              " is being cleaned (its worktree is being removed); the gate "
                              "stays open");
  }
  const std::string decision = g.decision;
  Status s = ReopenIn(id, [&](domain::Flow& fl) -> Status {
      if (decision == "cancel") {
        return Move(fl, FlowStep::kCancelled, "cancelled by a person at gate " + std::to_string(gate) +
                                                  (reason.empty() ? "" : ": " + reason));
      }
      if (decision != "another-round") return Status::Ok();
      fl.round += 1;
      fl.fix_rounds += 1;
      // A person's round is not held back by the limits that stopped the flow.
      fl.max_fix_rounds = std::max(fl.max_fix_rounds, fl.fix_rounds);
      if (fl.budget_usd > 0 && View(fl).cost_usd >= fl.budget_usd) fl.budget_usd = 0;
      fl.verify_index = 0;
      fl.fix_brief = Utf8Prefix("A person looked at why the flow stopped (" + fl.note + ") and asked for "
                                "another round" + (reason.empty() ? "." : ": " + reason), 64000);
      return Move(fl, FlowStep::kImplement,
                  "another round, asked for by a person at gate " + std::to_string(gate));
  });
  if (!s.ok()) {
    spdlog::error("flow {}: the decision of gate {} could not be applied: {}", id, gate, s.message());
    return Status::Ok();
  }
  core_.batcher.AfterCommit([this, id](bool ok) {
    if (ok) Advance(id);
  });
  return Status::Ok();
}

std::string FlowService::WriterHandle(const domain::Flow& f) {
  std::string first = flow_support::WriterTerminal(f.id);
  auto t = core_.terminals.Get(first);
  return !t || t->profile == f.writer ? first : first + "-" + f.writer;
}

std::optional<std::string> FlowService::SwapTarget(const domain::Dispatch& d,
                                                   const domain::Task& t) {
  auto f = store_.ByTask(t.id);
  if (!f || f->status != "running" || f->step != FlowStep::kImplement || f->task_id != t.id) {
    return std::nullopt;
  }
  auto trouble = [&](const domain::Dispatch& x) {
    static const std::set<std::string> kinds = {"rate_limited", "provider_unavailable", "timeout",
                                                "transport_error", "heartbeat_lost"};
    return x.failure_class == "operational" && x.profile == d.profile && kinds.count(x.failure_kind);
  };
  // This attempt and the ones before it, newest first, until one that was not such trouble.
  auto all = core_.dispatches.ForTask(t.id);
  int streak = trouble(d) ? 1 : 0;
  for (auto it = all.rbegin(); streak > 0 && it != all.rend(); ++it) {
    if (it->id == d.id) continue;
    if (!trouble(*it)) break;
    ++streak;
  }
  if (streak < 2) return std::nullopt;
  std::string chosen;
  for (const auto& p : core_.profiles.profiles) {
    if (p.type != "cli" || p.name == d.profile || WriterFamily(p) != f->writer_family) continue;
    if (chosen.empty() || p.name < chosen) chosen = p.name;
  }
  if (chosen.empty()) return std::nullopt;  // no other writer of the family: retry as is
  std::string handle = flow_support::WriterTerminal(f->id) + "-" + chosen;
  if (!core_.handles.Get(handle)) {
    domain::Terminal term{handle, chosen, f->worktree, domain::TerminalState::kIdle, 0,
                          core_.clock.NowMs()};
    core_.handles.Insert({handle, "terminal", term.created_ms, false});
    core_.terminals.Insert(term);
  }
  std::string note = "writer swapped from " + d.profile + " to " + chosen + " (same family " +
                     f->writer_family + ") after " + std::to_string(streak) +
                     " operational failures in a row (last: " + d.failure_kind + ")";
  f->writer = chosen;
  auto h = nlohmann::json::parse(f->history, nullptr, false);
  if (h.is_array()) {
    h.push_back({{"step", "implement"}, {"round", f->round}, {"at_ms", core_.clock.NowMs()},
                 {"note", note}});
    f->history = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  f->note = note;
  store_.Update(*f);
  core_.Notify({f->coordinator, "flow", "high", 0, 0, "flow " + std::to_string(f->id) + ": " + note,
                note, nlohmann::json({{"flow_id", f->id}, {"step", "implement"}, {"writer", chosen},
                                      {"previous_writer", d.profile}})
                          .dump()});
  return handle;
}

Status FlowService::ReopenIn(int64_t id, const std::function<Status(domain::Flow&)>& fn) {
  auto f = store_.Get(id);
  // A flow cleaned, or being cleaned (its worktree is going), is not reopened.
  if (!f || f->step != FlowStep::kNeedsHuman || f->cleaned || cleaning_.count(id)) {
    return Status::Ok();  // decided
  }
  if (Status c = fn(*f); !c.ok()) return c;
  store_.Update(*f);
  if (f->step != FlowStep::kNeedsHuman) {
    // Its other open gates decided nothing: superseded.
    for (const auto& g : core_.gates.List(true, 0)) {
      if (g.flow_id == id) core_.gates.Resolve(g.id, "superseded", core_.clock.NowMs());
    }
  }
  return Status::Ok();
}

void FlowService::Reopen(int64_t id, std::function<Status(domain::Flow&)> fn) {
  Status s = core_.batcher.Write([&]() -> Status { return ReopenIn(id, fn); });
  if (!s.ok()) {
    spdlog::error("flow {}: reopening failed: {}", id, s.message());
    return;
  }
  core_.batcher.AfterCommit([this, id](bool ok) {
    if (ok) Advance(id);
  });
}

}  // namespace conclave::service
