// Contract: see review_verdicts.h.
#include "service/review_verdicts.h"

#include "common/utf8.h"
#include "domain/carry_over.h"
#include "domain/signoff.h"

namespace conclave::service {
namespace {

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void ReviewVerdicts::Tell(const domain::Review& r, const std::string& type,
                          const std::string& priority, const std::string& subject,
                          const std::string& body, const nlohmann::json& payload) {
  domain::MessageRecord m;
  m.from = std::string(domain::kDaemonSender);
  m.to = r.coordinator;
  m.type = type;
  m.priority = priority;
  m.subject = subject;
  m.body = body;
  m.payload = Dump(payload);
  m.thread_id = "review-" + std::to_string(r.id);
  core_.Emit(m);
}

void ReviewVerdicts::OpenGate(domain::Review& r, const std::string& question, const char* options) {
  domain::Gate g = gates_.InsertForReview(r.id, question, options);
  r.gate_id = g.id;
  Tell(r, "decision_gate", "high",
       "decision needed (gate " + std::to_string(g.id) + ") for review " + std::to_string(r.id),
       g.question, {{"gate_id", g.id}, {"review_id", r.id}, {"options", nlohmann::json::parse(options)}});
}

void ReviewVerdicts::Finalize(domain::Review& r, const std::string& verdict,
                              const std::string& termination, const std::string& reason,
                              const std::vector<domain::ReconciledFinding>& findings,
                              bool escalate) {
  r.status = domain::ReviewStatus::kDone;
  r.verdict = verdict;
  r.termination = termination;
  r.reason = Utf8Prefix(reason, 4000);
  r.findings = Dump(domain::ReconciledListToJson(findings));
  r.updated_ms = core_.clock.NowMs();
  const bool stalemate = verdict == "adversarial-stalemate";
  const bool absent = verdict == "gate-absent";
  const bool alarm = escalate || stalemate || absent;
  Tell(r, alarm ? "escalation" : "status", alarm ? "high" : "normal",
       "review " + std::to_string(r.id) + ": " + verdict, reason,
       {{"review_id", r.id}, {"verdict", verdict}, {"termination", termination},
        {"revision", r.revision}, {"reason", r.reason}});
  const std::string id = std::to_string(r.id);
  if (stalemate) {
    // Never "trust the primary": a person decides.
    OpenGate(r,
             "Review " + id + " reached its debate cap without agreement. Adjudicate the open "
             "findings (accept-risk from a terminal signs it off as APPROVED_BY_SIGNOFF): " + reason,
             domain::kStalemateGateOptions);
  } else if (absent && r.blocked_by.empty()) {
    OpenGate(r,
             "Review " + id + " has no gate: " + reason + ". Decide: accept-risk (from a terminal: "
             "a human sign-off, APPROVED_BY_SIGNOFF), retry (conclave review regate " + id +
             " --retry-absent) or reject.",
             domain::kGateAbsentGateOptions);
  }
  store_.Update(r);
  const int64_t review_id = r.id;
  const int revision = r.revision;
  const std::string repo = r.repo;
  core_.batcher.AfterCommit([this, review_id, revision, repo](bool ok) {
    if (!ok) return;
    workspace_.Cleanup(review_id, revision, repo);
    if (finished_) finished_->OnReviewFinished(review_id);
  });
}

Status ReviewVerdicts::OnReviewGateResolved(const domain::Gate& g,
                                            const domain::CallerIdentity& caller,
                                            const std::string& reason) {
  auto r = store_.Get(g.review_id);
  if (!r) return Status::Ok();
  domain::Signoff s;
  s.review_id = r->id;
  s.revision = r->revision;
  s.gate_id = g.id;
  s.caller = caller;
  s.decision = g.decision;
  s.reason = Utf8Prefix(reason, 4000);
  s.verdict_before = r->verdict;
  s.created_ms = core_.clock.NowMs();
  domain::SignoffOutcome outcome = domain::DecideSignoff(r->verdict, g.decision, caller);
  if (r->gate_id != g.id || r->status != domain::ReviewStatus::kDone) {
    outcome.verdict = r->verdict;  // a gate of an earlier revision: recorded, changes nothing
    outcome.note = "gate " + std::to_string(g.id) + " belongs to an earlier revision; the verdict "
                   "stays " + r->verdict;
  }
  s.human = outcome.human;
  s.verdict_after = outcome.verdict;
  store_.InsertSignoff(s);
  if (outcome.verdict != r->verdict) {
    // A flow stopped at this review hears of the sign-off once it is committed.
    core_.batcher.AfterCommit([this, review_id = r->id](bool ok) {
      if (ok && finished_) finished_->OnReviewFinished(review_id);
    });
    r->verdict = outcome.verdict;
    r->reason = Utf8Prefix(outcome.note + (reason.empty() ? "" : " — " + reason) +
                               " (was: " + r->reason + ")",
                           4000);
    r->updated_ms = s.created_ms;
    store_.Update(*r);
  }
  Tell(*r, "status", "normal",
       "review " + std::to_string(r->id) + ": sign-off on gate " + std::to_string(g.id) + " (" +
           g.decision + ")",
       outcome.note,
       {{"review_id", r->id}, {"gate_id", g.id}, {"decision", g.decision},
        {"human", s.human}, {"verdict", outcome.verdict}, {"caller_pid", caller.pid},
        {"caller_uid", caller.uid}, {"caller_exe", caller.exe}, {"caller_tty", caller.tty}});
  return Status::Ok();
}

}  // namespace conclave::service
