// Contract: see review_rounds.h.
#include "service/review_rounds.h"

#include <spdlog/spdlog.h>

#include "common/utf8.h"
#include "domain/carry_over.h"
#include "domain/debate.h"
#include "domain/family.h"
#include "domain/finding_ids.h"
#include "domain/findings.h"
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

// The provenance the reconciliation does not know: the raising reviewer's profile, revision.
void Stamp(std::vector<domain::ReconciledFinding>& list, const domain::Review& r,
           const std::vector<domain::ReviewRound>& rounds) {
  for (auto& f : list) {
    f.revision = r.revision;
    for (const auto& x : rounds) {
      if (x.round == f.round) f.profile = x.profile;
    }
  }
}

}  // namespace

int ReviewRounds::Ordinal(const domain::Review& r, int round) {
  int earlier = 0;
  for (const auto& x : store_.Rounds(r.id)) earlier += x.revision < r.revision ? 1 : 0;
  return earlier + round;
}

std::set<std::string> ReviewRounds::KnownIds(const domain::Review& r, const domain::ReviewRound& round) {
  std::set<std::string> ids = domain::IdsOf(domain::ReconciledListFromText(r.carried));
  if (round.role == "line" || r.measure) return ids;  // independent: only the carried ones
  for (const auto& x : RoundsOfRevision(store_, r)) {
    if (x.round >= round.round || x.state != RoundState::kDone) continue;
    for (const auto& f : FindingsFromJson(x.findings)) ids.insert(f.id);
  }
  return ids;
}

Status ReviewRounds::LaunchFirst(domain::Review& r, std::vector<int64_t>* to_dispatch) {
  auto plan = nlohmann::json::parse(r.plan, nullptr, false);
  if (!plan.is_object()) return Internal("review " + std::to_string(r.id) + " has no plan");
  if (r.mode == "debate") {
    Status s = launcher_.Launch(r, {0, "primary", plan["primary"].value("profile", ""), 0, r.measure},
                      to_dispatch);
    if (s.ok() && r.measure && !plan["challengers"].empty()) {
      // Phase 0: the foreign reviewer runs at once, on the same artifact, seeing nothing else.
      s = launcher_.Launch(r, {1, "challenger", plan["challengers"][0].value("profile", ""), 0, true},
                 to_dispatch);
    }
    if (!s.ok()) return s;
  } else {
    int i = 0;
    for (const auto& l : plan["lines"]) {
      Status ls = launcher_.Launch(r, {i++, "line", l.value("profile", ""), 0, true}, to_dispatch);
      if (!ls.ok()) return ls;
    }
  }
  for (const auto& x : RoundsOfRevision(store_, r)) {
    if (x.state == RoundState::kFailed) return Advance(r, to_dispatch);  // refused at launch
  }
  return Status::Ok();
}

void ReviewRounds::RoundRefused(int64_t task_id, const Status& why) {
  // Refused (budget, no terminal, no directory...): the reviewer is missing → the gate stays shut.
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
    return r && r->status == ReviewStatus::kRunning ? Advance(*r, &more) : Status::Ok();
  });
  if (s.ok()) launcher_.DispatchRounds(more);
}

void ReviewRounds::OnDispatchFinished(const domain::Dispatch& d, const std::string& task_role) {
  // Round tasks are made reviewers (RoundLauncher) and a task's role never changes: for every
  // other dispatch the read of review_rounds (a read transaction of its own, after the commit)
  // is skipped.
  if (task_role != "reviewer") return;
  auto round = store_.RoundForTask(d.task_id);
  if (!round || round->state != RoundState::kRunning) return;
  CheckRound(*round);
}

void ReviewRounds::Resume() {
  for (const auto& r : store_.Running()) {
    // The round directories may be gone (a reboot cleans the temp dir): make them again.
    launcher_.PrepareRunning(r);
    for (const auto& round : RoundsOfRevision(store_, r)) {
      if (round.state == RoundState::kRunning) CheckRound(round);
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
    round.findings = FindingsToJson(domain::NamespaceFindings(Ordinal(r, round.round), round.family,
                                                              parsed.findings, KnownIds(r, round)))
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
  std::vector<int64_t> retry;
  const bool independent = round.role == "line" || r.measure;
  if (Status s = launcher_.Launch(r, {round.round, round.role, round.profile, 1, independent}, &retry);
      !s.ok()) {
    round.state = RoundState::kFailed;
    round.error = Utf8Prefix("retry refused: " + s.message(), 2000);
    return Status::Ok();
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
  launcher_.DispatchRounds(to_dispatch);
}

std::vector<domain::ReconciledFinding> ReviewRounds::Carried(
    const domain::Review& r, const std::vector<domain::ReviewRound>& rounds,
    std::vector<std::vector<domain::Finding>>* rest) {
  auto carried = domain::ReconciledListFromText(r.carried);
  const auto ids = domain::IdsOf(carried);
  std::vector<domain::CarriedAnswer> answers;
  for (const auto& x : rounds) {
    rest->push_back(domain::TakeCarriedAnswers(FindingsFromJson(x.findings), x.family, ids, &answers));
  }
  return domain::ApplyCarriedAnswers(std::move(carried), answers);
}

bool ReviewRounds::FinalizeIfFailed(domain::Review& r, const std::vector<domain::ReviewRound>& rounds) {
  for (const auto& x : rounds) {
    if (x.state != RoundState::kFailed && x.state != RoundState::kMalformed) continue;
    // Gate-absent: the carried findings stay on record, open, for the next revision.
    verdicts_.Finalize(
        r, "gate-absent", "reviewer_missing",
        "reviewer " + x.profile + " (" + x.family + ", round " + std::to_string(x.round) + ") " +
            (x.state == RoundState::kFailed ? std::string(domain::RoundStateName(x.state))
                                            : std::string("returned malformed output")) +
            ": " + x.error,
        domain::ReconciledListFromText(r.carried), true);
    return true;
  }
  return false;
}

Status ReviewRounds::Advance(domain::Review& r, std::vector<int64_t>* to_dispatch) {
  const std::vector<domain::ReviewRound> rounds = RoundsOfRevision(store_, r);
  if (FinalizeIfFailed(r, rounds)) return Status::Ok();
  bool all_done = true, foreign_done = false;
  for (const auto& x : rounds) {
    all_done &= x.state == RoundState::kDone;
    foreign_done |= x.state == RoundState::kDone && !domain::SameFamily(x.family, r.writer_family);
  }
  if (!all_done) return Status::Ok();  // a round is still running
  if (r.mode == "debate" && !r.measure) return AdvanceDebate(r, rounds, foreign_done, to_dispatch);
  if (!foreign_done) {
    FinalizeNoForeign(r);
    return Status::Ok();
  }
  FinalizeParallel(r, rounds);
  return Status::Ok();
}

void ReviewRounds::FinalizeParallel(domain::Review& r, const std::vector<domain::ReviewRound>& rounds) {
  std::vector<std::vector<domain::Finding>> rest;
  auto carried = Carried(r, rounds, &rest);
  std::vector<domain::LineFindings> lines;
  for (size_t i = 0; i < rounds.size(); ++i) {
    const auto& x = rounds[i];
    lines.push_back({x.profile, x.family, rest[i], x.round, r.measure ? x.role : "line"});
  }
  auto reconciled = domain::SynthesizeParallel(lines, r.writer_family);
  Stamp(reconciled, r, rounds);
  reconciled.insert(reconciled.end(), carried.begin(), carried.end());
  domain::GateInput gate;
  gate.termination = domain::Termination::kConverged;
  gate.findings = reconciled;
  auto decision = domain::DecideGate(gate);
  verdicts_.Finalize(r, std::string(domain::VerdictName(decision.verdict)), "parallel",
                     decision.reason, reconciled, decision.escalate);
}

void ReviewRounds::FinalizeNoForeign(domain::Review& r) {
  // Fail closed: a review in which no reviewer of another family than the writer's took part
  // (a debate with cap 0 and a same-family primary) can never pass the gate.
  verdicts_.Finalize(r, "gate-absent", "no_foreign_reviewer",
                     "no reviewer outside the writer's family " + r.writer_family +
                         " took part; a merge needs a foreign reviewer",
                     domain::ReconciledListFromText(r.carried), true);
}

Status ReviewRounds::AdvanceDebate(domain::Review& r, const std::vector<domain::ReviewRound>& rounds,
                                   bool foreign_done, std::vector<int64_t>* to_dispatch) {
  std::vector<std::vector<domain::Finding>> rest;
  auto carried = Carried(r, rounds, &rest);
  std::vector<domain::RoundRecord> records;
  for (size_t i = 0; i < rounds.size(); ++i) {
    records.push_back({rounds[i].round, rounds[i].role == "challenger", rest[i], rounds[i].family});
  }
  domain::Termination t = domain::EvaluateDebate(records, r.cap);
  if (t != domain::Termination::kContinue && !foreign_done) {
    FinalizeNoForeign(r);
    return Status::Ok();
  }
  auto plan = nlohmann::json::parse(r.plan, nullptr, false);
  if (t == domain::Termination::kContinue) {
    int next = domain::NextRoundNumber(records);
    Status s;
    if (!domain::NextIsForeign(records)) {
      s = launcher_.Launch(r, {next, "primary", plan["primary"].value("profile", ""), 0, false}, to_dispatch);
    } else {
      const auto& cs = plan["challengers"];
      if (cs.empty()) {
        verdicts_.Finalize(r, "gate-absent", "reviewer_missing",
                           "no challenger available for round " + std::to_string(next), carried,
                           true);
        return Status::Ok();
      }
      const auto& c = cs[domain::ChallengerIndexForRound(next, cs.size())];
      s = launcher_.Launch(r, {next, "challenger", c.value("profile", ""), 0, false}, to_dispatch);
    }
    if (!s.ok()) return s;
    FinalizeIfFailed(r, RoundsOfRevision(store_, r));  // the next reviewer was refused
    return Status::Ok();
  }
  auto reconciled = domain::Reconcile(records, r.writer_family);
  Stamp(reconciled, r, rounds);
  reconciled.insert(reconciled.end(), carried.begin(), carried.end());
  domain::GateInput gate;
  gate.termination = t;
  gate.findings = reconciled;
  auto decision = domain::DecideGate(gate);
  verdicts_.Finalize(r, std::string(domain::VerdictName(decision.verdict)),
                     std::string(domain::TerminationName(t)), decision.reason, reconciled,
                     decision.escalate);
  return Status::Ok();
}

}  // namespace conclave::service
