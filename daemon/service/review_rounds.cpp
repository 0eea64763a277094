// ReviewService: launching reviewer rounds as real dispatches, reading their findings, and
// advancing a review to its fail-closed verdict.
#include <filesystem>
#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "common/utf8.h"
#include "domain/debate.h"
#include "domain/findings.h"
#include "domain/reconcile.h"
#include "domain/review_policy.h"
#include "service/review_service.h"

namespace conclave::service {
namespace fs = std::filesystem;
namespace {

const char* kReviewCoordinator = "conclave-review";

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
                              const std::vector<store::RoundRecordRow>& rounds, bool by_round) {
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

bool SameFamilyName(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string ReviewService::EnsureTerminal(const std::string& profile) {
  for (const auto& t : core_.terminals.List(false)) {
    if (t.profile == profile && t.state != "draining") return t.handle;
  }
  std::string dir = core_.config.state_dir + "/reviews";
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string handle = "review-" + profile;
  for (int i = 2; core_.handles.Get(handle); ++i) handle = "review-" + profile + "-" + std::to_string(i);
  store::TerminalRecord t{handle, profile, dir, "idle", 0, NowMs()};
  core_.handles.Insert({handle, "terminal", t.created_ms, false});
  core_.terminals.Insert(t);
  return handle;
}

std::string ReviewService::RoundBrief(const store::ReviewRecord& r, int round,
                                      const std::string& role,
                                      const std::vector<store::RoundRecordRow>& prior) {
  std::string b;
  b += "ROLE: reviewer (" + role + ")\n";
  b += "REVIEW-ID: " + std::to_string(r.id) + "\nREVIEW-REVISION: " + std::to_string(r.revision) +
       "\nREVIEW-ROUND: " + std::to_string(round) + "\nREVIEW-ROLE: " + role + "\n";
  b += "WRITER-FAMILY: " + r.writer_family + "\nARTIFACT-KIND: " + r.artifact_kind + "\n\nTASK:\n";
  if (role == "challenger") {
    b += "You are a foreign-family challenger in an adversarial review. Below are the findings "
         "of the earlier rounds. Find what the primary reviewer missed or got wrong. For each "
         "earlier finding, agree (repeat its id with stance \"agree\"), or rebut it (same id, "
         "stance \"rebut\", say why) — do not simply validate. Report your own new findings "
         "with stance \"new\". If you raised a finding earlier and now accept it was wrong, "
         "repeat its id with stance \"withdraw\".\n";
  } else if (role == "primary" && round > 0) {
    b += "You are the same-source primary reviewer. A foreign-family challenger answered your "
         "review; respond to each of its findings: agree (concede, same id, stance \"agree\"), "
         "rebut with reasons (same id, stance \"rebut\"), or withdraw one of your own findings "
         "(its id, stance \"withdraw\"). Add new findings with stance \"new\".\n";
  } else {
    b += "Review the artifact below for correctness, security, performance, maintainability "
         "and docs. Report every defect you find.\n";
  }
  if (!prior.empty()) {
    b += "\nEARLIER ROUNDS (JSON):\n";
    for (const auto& p : prior) {
      nlohmann::json j = {{"round", p.round}, {"role", p.role}, {"family", p.family},
                          {"findings", nlohmann::json::parse(p.findings, nullptr, false)}};
      b += j.dump() + "\n";
    }
  }
  b += "\nARTIFACT:\n<<<ARTIFACT\n" + r.artifact + (r.artifact.empty() || r.artifact.back() == '\n' ? "" : "\n") +
       "ARTIFACT>>>\n\n";
  b += "OUTPUT: reply with a fenced ```json block holding {\"findings\": [ {\"id\", \"severity\" "
       "(BLOCKER|HIGH|MAJOR|MEDIUM|LOW|INFO), \"category\" (correctness|security|performance|"
       "maintainability|docs), \"location\": {\"path\", \"line\"}, \"title\", \"detail\", "
       "\"stance\" (new|agree|rebut|withdraw), \"refs\": []} ]}. An empty list means you found "
       "nothing.\n";
  return b;
}

Status ReviewService::LaunchRound(store::ReviewRecord& r, int round, const std::string& role,
                                  const std::string& profile, const std::string& family,
                                  int retry, std::vector<int64_t>* to_dispatch) {
  if (!core_.profiles.Find(profile)) {
    return FailedPrecondition("reviewer profile '" + profile + "' is not loaded");
  }
  if (!core_.handles.Get(kReviewCoordinator)) {
    core_.handles.Insert({kReviewCoordinator, "coordinator", NowMs(), false});
  }
  EnsureTerminal(profile);
  std::vector<store::RoundRecordRow> prior;
  for (const auto& x : store_.Rounds(r.id)) {
    if (x.revision == r.revision && x.state == "done" && x.round < round) prior.push_back(x);
  }
  store::TaskRecord t;
  t.title = "review " + std::to_string(r.id) + " rev " + std::to_string(r.revision) + " round " +
            std::to_string(round) + " (" + role + ", " + profile + ")";
  t.brief = RoundBrief(r, role == "line" ? 0 : round, role, role == "line" ? decltype(prior){} : prior);
  t.status = "ready";
  t.role = "reviewer";
  t.idem_key = "review:" + std::to_string(r.id) + ":rev" + std::to_string(r.revision) + ":round" +
               std::to_string(round) + ":" + profile + (retry ? ":retry" + std::to_string(retry) : "");
  t.coordinator = kReviewCoordinator;
  t.session = r.session;
  t.created_ms = t.updated_ms = NowMs();
  t.id = core_.tasks.Insert(t);
  if (retry == 0) {
    store::RoundRecordRow row;
    row.review_id = r.id;
    row.revision = r.revision;
    row.round = round;
    row.role = role;
    row.profile = profile;
    row.family = family;
    row.task_id = t.id;
    row.created_ms = NowMs();
    store_.InsertRound(row);
  }
  to_dispatch->push_back(t.id);
  return Status::Ok();
}

void ReviewService::DispatchRounds(const std::vector<int64_t>& task_ids) {
  for (int64_t task_id : task_ids) {
    auto round = store_.RoundForTask(task_id);
    auto task = core_.tasks.Get(task_id);
    if (!round || !task) continue;
    auto review = store_.Get(round->review_id);
    DispatchInput in;
    in.task_id = task_id;
    in.to = "@profile:" + round->profile;
    in.from = kReviewCoordinator;
    in.reviewer = true;
    in.timeout_s = core_.config.review.round_timeout_s;
    if (review && review->budget_usd > 0) {
      double spent = 0;
      for (const auto& x : store_.Rounds(review->id)) spent += x.cost_usd;
      in.budget_usd = std::max(0.0001, review->budget_usd - spent);
    }
    tasks_.Dispatch(in, [this, task_id](StatusOr<store::DispatchRecord> d) {
      if (d.ok()) return;
      // Refused (budget, no terminal...): the reviewer is missing → the gate stays shut.
      spdlog::warn("review round task {} could not be dispatched: {}", task_id, d.status().message());
      Status s = core_.batcher.Write([&]() -> Status {
        auto round = store_.RoundForTask(task_id);
        if (!round || round->state != "running") return Status::Ok();
        round->state = "failed";
        round->error = "dispatch refused: " + d.status().message();
        round->finished_ms = NowMs();
        store_.UpdateRound(*round);
        auto r = store_.Get(round->review_id);
        std::vector<int64_t> more;
        if (r) return Advance(*r, &more);
        return Status::Ok();
      });
      (void)s;
    });
  }
}

void ReviewService::OnDispatchFinished(const store::DispatchRecord& d) {
  auto round = store_.RoundForTask(d.task_id);
  if (!round || round->state != "running") return;
  CheckRound(*round);
}

void ReviewService::Resume() {
  for (const auto& r : store_.List(100000)) {
    if (r.status != "running") continue;
    for (const auto& round : store_.Rounds(r.id)) {
      if (round.revision == r.revision && round.state == "running") CheckRound(round);
    }
  }
}

void ReviewService::CheckRound(store::RoundRecordRow round) {
  auto task = core_.tasks.Get(round.task_id);
  if (!task || task->status == "dispatched" || task->status == "pending") return;  // still going
  if (task->status == "ready" && core_.dispatches.ForTask(task->id).empty()) return;
  std::vector<int64_t> to_dispatch;
  int64_t review_id = round.review_id;
  Status s = core_.batcher.Write([&]() -> Status {
    auto r = store_.Get(review_id);
    if (!r || r->status != "running" || round.revision != r->revision) return Status::Ok();
    double cost = 0;
    std::string failure;
    for (const auto& d : core_.dispatches.ForTask(task->id)) {
      cost += d.cost_usd;
      if (!d.failure_kind.empty()) failure = d.failure_kind + ": " + d.evidence;
    }
    round.cost_usd += cost;
    round.finished_ms = NowMs();
    if (task->status == "completed") {
      auto result = nlohmann::json::parse(task->result, nullptr, false);
      domain::FindingsParse parsed;
      if (result.is_object() && result.contains("structured_output") &&
          result["structured_output"].is_object()) {
        parsed = domain::ParseFindingsJson(result["structured_output"]);
      } else {
        std::string text = result.is_object() ? result.value("text", "") : "";
        parsed = domain::ExtractFindings(text);
      }
      if (parsed.ok) {
        round.state = "done";
        round.findings = FindingsToJson(parsed.findings).dump();
      } else if (round.malformed == 0) {
        // A contract violation for this round: counted for reliability, retried once.
        round.malformed = 1;
        round.error = Utf8Prefix("malformed findings: " + parsed.error, 2000);
        store_.UpdateRound(round);
        std::vector<int64_t> retry;
        Status ls = LaunchRound(*r, round.round, round.role, round.profile, round.family, 1, &retry);
        if (!ls.ok()) return ls;
        round.task_id = retry.front();
        round.finished_ms = 0;
        store_.UpdateRound(round);
        to_dispatch.insert(to_dispatch.end(), retry.begin(), retry.end());
        return Status::Ok();
      } else {
        round.malformed += 1;
        round.state = "malformed";
        round.error = Utf8Prefix("malformed findings twice: " + parsed.error, 2000);
      }
    } else {
      round.state = "failed";
      round.error = Utf8Prefix(failure.empty() ? "task " + task->status : failure, 2000);
    }
    store_.UpdateRound(round);
    return Advance(*r, &to_dispatch);
  });
  if (!s.ok()) spdlog::error("review {}: advancing failed: {}", review_id, s.message());
  DispatchRounds(to_dispatch);
}

Status ReviewService::Advance(store::ReviewRecord& r, std::vector<int64_t>* to_dispatch) {
  std::vector<store::RoundRecordRow> rounds;
  for (const auto& x : store_.Rounds(r.id)) {
    if (x.revision == r.revision) rounds.push_back(x);
  }
  for (const auto& x : rounds) {
    if (x.state == "failed" || x.state == "malformed") {
      Finalize(r, "gate-absent", "reviewer_missing",
               "reviewer " + x.profile + " (" + x.family + ", round " + std::to_string(x.round) +
                   ") " + (x.state == "failed" ? "failed" : "returned malformed output") + ": " +
                   x.error,
               nlohmann::json::array(), true);
      return Status::Ok();
    }
  }
  auto plan = nlohmann::json::parse(r.plan);
  // Fail closed: a review in which no reviewer of another family than the writer's took part
  // (a debate with cap 0 and a same-family primary) can never pass the gate.
  auto foreign_done = [&] {
    for (const auto& x : rounds) {
      if (x.state == "done" && !SameFamilyName(x.family, r.writer_family)) return true;
    }
    return false;
  };
  auto finished = [&] {
    for (const auto& x : rounds) {
      if (x.state != "done") return false;
    }
    return true;
  };
  auto no_foreign = [&] {
    Finalize(r, "gate-absent", "no_foreign_reviewer",
             "no reviewer outside the writer's family " + r.writer_family +
                 " took part; a merge needs a foreign reviewer",
             nlohmann::json::array(), true);
  };
  if (r.mode != "debate") {
    if (finished() && !foreign_done()) {
      no_foreign();
      return Status::Ok();
    }
    for (const auto& x : rounds) {
      if (x.state != "done") return Status::Ok();  // other lines still running
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
  // Debate.
  std::vector<domain::RoundRecord> records;
  for (const auto& x : rounds) {
    if (x.state != "done") return Status::Ok();  // the current round is still running
    records.push_back({x.round, x.role == "challenger", FindingsFromJson(x.findings), x.family});
  }
  domain::Termination t = domain::EvaluateDebate(records, r.cap);
  if (t != domain::Termination::kContinue && !foreign_done()) {
    no_foreign();
    return Status::Ok();
  }
  if (t == domain::Termination::kContinue) {
    int next = domain::NextRoundNumber(records);
    if (domain::NextIsForeign(records)) {
      const auto& cs = plan["challengers"];
      if (cs.empty()) {
        Finalize(r, "gate-absent", "reviewer_missing", "no challenger available for round " +
                 std::to_string(next), nlohmann::json::array(), true);
        return Status::Ok();
      }
      const auto& c = cs[domain::ChallengerIndexForRound(next, cs.size())];
      return LaunchRound(r, next, "challenger", c["profile"], c["family"], 0, to_dispatch);
    }
    return LaunchRound(r, next, "primary", plan["primary"]["profile"], plan["primary"]["family"], 0,
                       to_dispatch);
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

void ReviewService::Finalize(store::ReviewRecord& r, const std::string& verdict,
                             const std::string& termination, const std::string& reason,
                             const nlohmann::json& findings, bool escalate) {
  r.status = "done";
  r.verdict = verdict;
  r.termination = termination;
  r.reason = Utf8Prefix(reason, 4000);
  r.findings = findings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.updated_ms = NowMs();
  r.reason = Utf8Prefix(reason, 4000);
  nlohmann::json payload = {{"review_id", r.id},       {"verdict", verdict},
                            {"termination", termination}, {"revision", r.revision},
                            {"reason", r.reason}};
  domain::MessageRecord m;
  m.from = "conclaved";
  m.to = r.coordinator;
  m.thread_id = "review-" + std::to_string(r.id);
  m.subject = "review " + std::to_string(r.id) + ": " + verdict;
  m.body = reason;
  m.payload = payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  m.type = escalate || verdict == "adversarial-stalemate" || verdict == "gate-absent" ? "escalation"
                                                                                       : "status";
  m.priority = m.type == "escalation" ? "high" : "normal";
  core_.Emit(m);
  if (verdict == "adversarial-stalemate") {
    // Never "trust the primary": the coordinator decides.
    store::GateRecord g;
    g.review_id = r.id;
    g.question = "Review " + std::to_string(r.id) +
                 " reached its debate cap without agreement. Adjudicate the open findings: " +
                 reason;
    g.options = R"(["fix","accept-risk","escalate"])";
    g.created_ms = NowMs();
    g.id = core_.gates.Insert(g);
    r.gate_id = g.id;
    domain::MessageRecord gm = m;
    gm.type = "decision_gate";
    gm.subject = "decision needed (gate " + std::to_string(g.id) + ") for review " +
                 std::to_string(r.id);
    gm.body = g.question;
    gm.payload = nlohmann::json({{"gate_id", g.id}, {"review_id", r.id}}).dump();
    core_.Emit(gm);
  }
  store_.Update(r);
  int64_t id = r.id;
  core_.batcher.AfterCommit([this, id](bool ok) {
    if (ok) WakeWaiters(id);
  });
}

}  // namespace conclave::service
