#include "service/review_rounds.h"

#include <spdlog/spdlog.h>

#include "common/utf8.h"
#include "domain/debate.h"
#include "domain/family.h"
#include "domain/findings.h"
#include "domain/reconcile.h"
#include "domain/review_brief.h"
#include "domain/review_policy.h"

namespace conclave::service {
namespace {
using domain::ReviewStatus;
using domain::RoundState;
using domain::TaskState;

nlohmann::json FindingsToJson(const std::vector<domain::Finding>& fs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : fs) a.push_back(domain::FindingToJson(f));
  return a;
}

std::vector<domain::Finding> FindingsFromJson(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return {};
  auto parsed = domain::ParseFindingsJson({{"findings", j}});
  return parsed.ok ? parsed.findings : std::vector<domain::Finding>{};
}

// Reconciled findings with their provenance (family, round, profile, disposition, open).
// Parallel lines are matched to their reviewer by family, debate findings by round.
nlohmann::json ProvenanceJson(const std::vector<domain::ReconciledFinding>& reconciled,
                              const std::vector<domain::ReviewRound>& rounds, bool by_round) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : reconciled) {
    auto j = domain::FindingToJson(f.finding);
    j["family"] = f.family;
    j["round"] = f.round;
    j["foreign"] = f.from_foreign;
    j["disposition"] = f.disposition;
    j["open"] = f.open;
    for (const auto& x : rounds) {
      if (by_round ? x.round == f.round : x.family == f.family) j["profile"] = x.profile;
    }
    out.push_back(j);
  }
  return out;
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const std::string kReviewCoordinator(domain::kReviewSender);

}  // namespace

Status ReviewRounds::Launch(domain::Review& r, int round, const std::string& role,
                            const std::string& profile, const std::string& family, int retry,
                            std::vector<int64_t>* to_dispatch) {
  if (!core_.profiles.Find(profile)) {
    return FailedPrecondition("reviewer profile '" + profile + "' is not loaded");
  }
  if (!core_.handles.Get(kReviewCoordinator)) {
    core_.handles.Insert({kReviewCoordinator, "coordinator", core_.clock.NowMs(), false});
  }
  terminals_.EnsureFor(profile, core_.config.state_dir + "/reviews", "review-");
  std::vector<domain::ReviewRound> prior;
  if (role != "line") {
    for (const auto& x : store_.Rounds(r.id)) {
      if (x.revision == r.revision && x.state == RoundState::kDone && x.round < round) {
        prior.push_back(x);
      }
    }
  }
  domain::Task t;
  t.title = "review " + std::to_string(r.id) + " rev " + std::to_string(r.revision) + " round " +
            std::to_string(round) + " (" + role + ", " + profile + ")";
  t.brief = domain::BuildRoundBrief(r, role == "line" ? 0 : round, role, prior);
  t.status = TaskState::kReady;
  t.role = "reviewer";
  t.idem_key = "review:" + std::to_string(r.id) + ":rev" + std::to_string(r.revision) + ":round" +
               std::to_string(round) + ":" + profile +
               (retry ? ":retry" + std::to_string(retry) : "");
  t.coordinator = kReviewCoordinator;
  t.session = r.session;
  t.created_ms = t.updated_ms = core_.clock.NowMs();
  t.id = core_.tasks.Insert(t);
  if (retry == 0) {
    domain::ReviewRound row;
    row.review_id = r.id;
    row.revision = r.revision;
    row.round = round;
    row.role = role;
    row.profile = profile;
    row.family = family;
    row.task_id = t.id;
    row.created_ms = core_.clock.NowMs();
    store_.InsertRound(row);
  }
  to_dispatch->push_back(t.id);
  return Status::Ok();
}

Status ReviewRounds::LaunchFirst(domain::Review& r, std::vector<int64_t>* to_dispatch) {
  auto plan = nlohmann::json::parse(r.plan, nullptr, false);
  if (!plan.is_object()) return Internal("review " + std::to_string(r.id) + " has no plan");
  if (r.mode == "debate") {
    return Launch(r, 0, "primary", plan["primary"]["profile"], plan["primary"]["family"], 0,
                  to_dispatch);
  }
  int i = 0;
  for (const auto& l : plan["lines"]) {
    Status ls = Launch(r, i++, "line", l["profile"], l["family"], 0, to_dispatch);
    if (!ls.ok()) return ls;
  }
  return Status::Ok();
}

void ReviewRounds::DispatchRounds(const std::vector<int64_t>& task_ids) {
  for (int64_t task_id : task_ids) {
    auto round = store_.RoundForTask(task_id);
    if (!round || !core_.tasks.Get(task_id)) continue;
    auto review = store_.Get(round->review_id);
    DispatchInput in;
    in.task_id = task_id;
    in.to = "@profile:" + round->profile;
    in.from = kReviewCoordinator;
    in.timeout_s = core_.config.review.round_timeout_s;
    if (review && review->budget_usd > 0) {
      double spent = 0;
      for (const auto& x : store_.Rounds(review->id)) spent += x.cost_usd;
      in.budget_usd = std::max(0.0001, review->budget_usd - spent);
    }
    scheduler_.Dispatch(in, [this, task_id](StatusOr<domain::Dispatch> d) {
      if (!d.ok()) RoundRefused(task_id, d.status());
    });
  }
}

void ReviewRounds::RoundRefused(int64_t task_id, const Status& why) {
  // Refused (budget, no terminal...): the reviewer is missing → the gate stays shut.
  spdlog::warn("review round task {} could not be dispatched: {}", task_id, why.message());
  std::vector<int64_t> more;
  Status s = core_.batcher.Write([&]() -> Status {
    auto round = store_.RoundForTask(task_id);
    if (!round || round->state != RoundState::kRunning) return Status::Ok();
    round->state = RoundState::kFailed;
    round->error = "dispatch refused: " + why.message();
    round->finished_ms = core_.clock.NowMs();
    store_.UpdateRound(*round);
    auto r = store_.Get(round->review_id);
    return r ? Advance(*r, &more) : Status::Ok();
  });
  if (s.ok()) DispatchRounds(more);
}

void ReviewRounds::OnDispatchFinished(const domain::Dispatch& d) {
  auto round = store_.RoundForTask(d.task_id);
  if (!round || round->state != RoundState::kRunning) return;
  CheckRound(*round);
}

void ReviewRounds::Resume() {
  for (const auto& r : store_.List(100000)) {
    if (r.status != ReviewStatus::kRunning) continue;
    for (const auto& round : store_.Rounds(r.id)) {
      if (round.revision == r.revision && round.state == RoundState::kRunning) CheckRound(round);
    }
  }
}

Status ReviewRounds::ReadRound(domain::Review& r, domain::ReviewRound& round,
                               const domain::Task& task, std::vector<int64_t>* to_dispatch,
                               bool* retried) {
  auto result = nlohmann::json::parse(task.result, nullptr, false);
  domain::FindingsParse parsed;
  if (result.is_object() && result.contains("structured_output") &&
      result["structured_output"].is_object()) {
    parsed = domain::ParseFindingsJson(result["structured_output"]);
  } else {
    parsed = domain::ExtractFindings(result.is_object() ? result.value("text", "") : "");
  }
  if (parsed.ok) {
    round.state = RoundState::kDone;
    round.findings = FindingsToJson(parsed.findings).dump();
    return Status::Ok();
  }
  if (round.malformed > 0) {
    round.malformed += 1;
    round.state = RoundState::kMalformed;
    round.error = Utf8Prefix("malformed findings twice: " + parsed.error, 2000);
    return Status::Ok();
  }
  // A contract violation for this round: counted for reliability, retried once.
  round.malformed = 1;
  round.error = Utf8Prefix("malformed findings: " + parsed.error, 2000);
  store_.UpdateRound(round);
  std::vector<int64_t> retry;
  if (Status s = Launch(r, round.round, round.role, round.profile, round.family, 1, &retry); !s.ok()) {
    return s;
  }
  round.task_id = retry.front();
  round.finished_ms = 0;
  store_.UpdateRound(round);
  to_dispatch->insert(to_dispatch->end(), retry.begin(), retry.end());
  *retried = true;
  return Status::Ok();
}

void ReviewRounds::CheckRound(domain::ReviewRound round) {
  auto task = core_.tasks.Get(round.task_id);
  if (!task || task->status == TaskState::kDispatched || task->status == TaskState::kPending) return;
  if (task->status == TaskState::kReady && core_.dispatches.ForTask(task->id).empty()) return;
  std::vector<int64_t> to_dispatch;
  int64_t review_id = round.review_id;
  Status s = core_.batcher.Write([&]() -> Status {
    auto r = store_.Get(review_id);
    if (!r || r->status != ReviewStatus::kRunning || round.revision != r->revision) {
      return Status::Ok();
    }
    std::string failure;
    for (const auto& d : core_.dispatches.ForTask(task->id)) {
      round.cost_usd += d.cost_usd;
      if (!d.failure_kind.empty()) failure = d.failure_kind + ": " + d.evidence;
    }
    round.finished_ms = core_.clock.NowMs();
    if (task->status == TaskState::kCompleted) {
      bool retried = false;
      if (Status rs = ReadRound(*r, round, *task, &to_dispatch, &retried); !rs.ok()) return rs;
      if (retried) return Status::Ok();
    } else {
      round.state = RoundState::kFailed;
      round.error = Utf8Prefix(failure.empty() ? "task " + std::string(domain::TaskStateName(task->status))
                                               : failure,
                               2000);
    }
    store_.UpdateRound(round);
    return Advance(*r, &to_dispatch);
  });
  if (!s.ok()) spdlog::error("review {}: advancing failed: {}", review_id, s.message());
  DispatchRounds(to_dispatch);
}

bool ReviewRounds::FinalizeIfFailed(domain::Review& r, const std::vector<domain::ReviewRound>& rounds) {
  for (const auto& x : rounds) {
    if (x.state != RoundState::kFailed && x.state != RoundState::kMalformed) continue;
    Finalize(r, "gate-absent", "reviewer_missing",
             "reviewer " + x.profile + " (" + x.family + ", round " + std::to_string(x.round) +
                 ") " + (x.state == RoundState::kFailed ? std::string(domain::RoundStateName(x.state))
                                                         : std::string("returned malformed output")) +
                 ": " + x.error,
             nlohmann::json::array(), true);
    return true;
  }
  return false;
}

Status ReviewRounds::Advance(domain::Review& r, std::vector<int64_t>* to_dispatch) {
  std::vector<domain::ReviewRound> rounds;
  for (const auto& x : store_.Rounds(r.id)) {
    if (x.revision == r.revision) rounds.push_back(x);
  }
  if (FinalizeIfFailed(r, rounds)) return Status::Ok();
  bool all_done = true, foreign_done = false;
  for (const auto& x : rounds) {
    all_done &= x.state == RoundState::kDone;
    foreign_done |= x.state == RoundState::kDone && !domain::SameFamily(x.family, r.writer_family);
  }
  if (!all_done) return Status::Ok();  // a round is still running
  if (r.mode == "debate") return AdvanceDebate(r, rounds, foreign_done, to_dispatch);
  if (!foreign_done) {
    FinalizeNoForeign(r);
    return Status::Ok();
  }
  std::vector<domain::LineFindings> lines;
  for (const auto& x : rounds) lines.push_back({x.profile, x.family, FindingsFromJson(x.findings)});
  auto reconciled = domain::SynthesizeParallel(lines, r.writer_family);
  domain::GateInput gate;
  gate.termination = domain::Termination::kConverged;
  gate.findings = reconciled;
  auto decision = domain::DecideGate(gate);
  Finalize(r, std::string(domain::VerdictName(decision.verdict)), "converged", decision.reason,
           ProvenanceJson(reconciled, rounds, /*by_round=*/false), decision.escalate);
  return Status::Ok();
}

void ReviewRounds::FinalizeNoForeign(domain::Review& r) {
  // Fail closed: a review in which no reviewer of another family than the writer's took part
  // (a debate with cap 0 and a same-family primary) can never pass the gate.
  Finalize(r, "gate-absent", "no_foreign_reviewer",
           "no reviewer outside the writer's family " + r.writer_family +
               " took part; a merge needs a foreign reviewer",
           nlohmann::json::array(), true);
}

Status ReviewRounds::AdvanceDebate(domain::Review& r, const std::vector<domain::ReviewRound>& rounds,
                                   bool foreign_done, std::vector<int64_t>* to_dispatch) {
  std::vector<domain::RoundRecord> records;
  for (const auto& x : rounds) {
    records.push_back({x.round, x.role == "challenger", FindingsFromJson(x.findings), x.family});
  }
  domain::Termination t = domain::EvaluateDebate(records, r.cap);
  if (t != domain::Termination::kContinue && !foreign_done) {
    FinalizeNoForeign(r);
    return Status::Ok();
  }
  auto plan = nlohmann::json::parse(r.plan, nullptr, false);
  if (t == domain::Termination::kContinue) {
    int next = domain::NextRoundNumber(records);
    if (!domain::NextIsForeign(records)) {
      return Launch(r, next, "primary", plan["primary"]["profile"], plan["primary"]["family"], 0,
                    to_dispatch);
    }
    const auto& cs = plan["challengers"];
    if (cs.empty()) {
      Finalize(r, "gate-absent", "reviewer_missing",
               "no challenger available for round " + std::to_string(next),
               nlohmann::json::array(), true);
      return Status::Ok();
    }
    const auto& c = cs[domain::ChallengerIndexForRound(next, cs.size())];
    return Launch(r, next, "challenger", c["profile"], c["family"], 0, to_dispatch);
  }
  auto reconciled = domain::Reconcile(records, r.writer_family);
  domain::GateInput gate;
  gate.termination = t;
  gate.findings = reconciled;
  auto decision = domain::DecideGate(gate);
  Finalize(r, std::string(domain::VerdictName(decision.verdict)),
           std::string(domain::TerminationName(t)), decision.reason,
           ProvenanceJson(reconciled, rounds, /*by_round=*/true), decision.escalate);
  return Status::Ok();
}

void ReviewRounds::Finalize(domain::Review& r, const std::string& verdict,
                            const std::string& termination, const std::string& reason,
                            const nlohmann::json& findings, bool escalate) {
  r.status = ReviewStatus::kDone;
  r.verdict = verdict;
  r.termination = termination;
  r.reason = Utf8Prefix(reason, 4000);
  r.findings = Dump(findings);
  r.updated_ms = core_.clock.NowMs();
  nlohmann::json payload = {{"review_id", r.id},       {"verdict", verdict},
                            {"termination", termination}, {"revision", r.revision},
                            {"reason", r.reason}};
  bool alarm = escalate || verdict == "adversarial-stalemate" || verdict == "gate-absent";
  Notice n{r.coordinator, alarm ? "escalation" : "status", alarm ? "high" : "normal", 0, 0,
           "review " + std::to_string(r.id) + ": " + verdict, reason, Dump(payload)};
  domain::MessageRecord m;
  m.from = std::string(domain::kDaemonSender);
  m.to = n.to;
  m.type = n.type;
  m.priority = n.priority;
  m.subject = n.subject;
  m.body = n.body;
  m.payload = n.payload;
  m.thread_id = "review-" + std::to_string(r.id);
  core_.Emit(m);
  if (verdict == "adversarial-stalemate") {
    // Never "trust the primary": the coordinator decides.
    domain::Gate g = gates_.InsertForReview(
        r.id,
        "Review " + std::to_string(r.id) +
            " reached its debate cap without agreement. Adjudicate the open findings: " + reason,
        R"(["fix","accept-risk","escalate"])");
    r.gate_id = g.id;
    m.type = "decision_gate";
    m.subject = "decision needed (gate " + std::to_string(g.id) + ") for review " +
                std::to_string(r.id);
    m.body = g.question;
    m.payload = nlohmann::json({{"gate_id", g.id}, {"review_id", r.id}}).dump();
    m.seq = 0;
    core_.Emit(m);
  }
  store_.Update(r);
  int64_t id = r.id;
  core_.batcher.AfterCommit([this, id](bool ok) {
    if (ok && finished_) finished_->OnReviewFinished(id);
  });
}

}  // namespace conclave::service
