// Contract: see review_service.h.
#include "service/review_service.h"

#include "common/hash.h"
#include "common/utf8.h"
#include "domain/carry_over.h"
#include "domain/model_family.h"
#include "domain/review_policy.h"
#include "exec/profile_model.h"
#include "service/flow_reads.h"

namespace conclave::service {
namespace {
constexpr size_t kMaxArtifactBytes = 4 << 20;
using domain::ReviewStatus;

// A commit-ish git may not read as an option, and nothing a shell or a path could abuse.
bool PlainRef(const std::string& s) {
  if (s.empty() || s.size() > 200 || s[0] == '-') return false;
  for (unsigned char c : s) {
    if (c <= ' ' || c == 0x7f || c == '\\') return false;
  }
  return true;
}

}  // namespace

ReviewView ReviewService::View(const domain::Review& r) {
  ReviewView v;
  v.review = r;
  v.rounds = store_.Rounds(r.id);
  v.signoffs = store_.Signoffs(r.id);
  for (const auto& round : v.rounds) v.cost_usd += round.cost_usd;
  return v;
}

void ReviewService::Report(int64_t since_ms, Done<ReportView> done) {
  core_.snapshots.Read<ReportView>(
      [since_ms](store::Database& db) {
        store::ReportStore report(db);
        store::ReviewStore reviews(db);
        ReportView view = ReviewReport(report, reviews).Build(since_ms);
        store::FlowStore flows(db);
        store::TaskStore tasks(db);
        store::DispatchStore dispatches(db);
        FlowReads reads{flows, tasks, dispatches, reviews};
        view.json["flows"] = FlowFiguresSince(reads, since_ms);
        return view;
      },
      std::move(done));
}

StatusOr<ReviewView> ReviewService::Get(int64_t id) {
  auto r = store_.Get(id);
  if (!r) return NotFound("id: review " + std::to_string(id) + " does not exist");
  return View(*r);
}

std::vector<ReviewView> ReviewService::List(int limit) {
  std::vector<ReviewView> out;
  for (const auto& r : store_.List(limit <= 0 ? 100 : std::min(limit, 1000))) out.push_back(View(r));
  return out;
}

Status ReviewService::Validate(StartReviewInput& in, domain::ReviewMode* mode) {
  if (in.artifact.empty()) return InvalidArgument("artifact: required (a file, or - for stdin)");
  if (in.artifact.size() > kMaxArtifactBytes) {
    return InvalidArgument("artifact: " + std::to_string(in.artifact.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxArtifactBytes));
  }
  if (in.artifact_kind.empty()) in.artifact_kind = "diff";
  static const char* kKinds[] = {"diff", "code", "doc", "spec"};
  bool kind_ok = false;
  for (const char* k : kKinds) kind_ok |= in.artifact_kind == k;
  if (!kind_ok) {
    return InvalidArgument("artifact_kind: '" + in.artifact_kind +
                           "' is not one of diff, code, doc, spec");
  }
  if (in.writer_family.empty()) return InvalidArgument("writer_family: required");
  if (in.mode.empty()) in.mode = in.measure ? "debate" : core_.config.review.default_mode;
  auto m = domain::ParseReviewMode(in.mode);
  if (!m) {
    return InvalidArgument("mode: '" + in.mode +
                           "' is not one of mechanical, simple, ordinary, strong, debate");
  }
  *mode = *m;
  if (in.measure && *m != domain::ReviewMode::kDebate) {
    return InvalidArgument("measure: runs the same-source primary and a foreign challenger "
                           "independently; it goes with --mode debate, not " + in.mode);
  }
  if (*m == domain::ReviewMode::kStrong && in.session.empty()) {
    return InvalidArgument("session: --mode strong needs the coordinator's session (--session or "
                           "CONCLAVE_SESSION); at most one Strong review runs per session");
  }
  if (in.cap > 10) return InvalidArgument("cap: at most 10 challenger invocations");
  if (in.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
  if (in.max_fix_rounds && (*in.max_fix_rounds < 0 || *in.max_fix_rounds > 20)) {
    return InvalidArgument("max_fix_rounds: must be between 0 and 20");
  }
  if (in.coordinator.empty()) in.coordinator = "coordinator";
  if (!core_.handles.Get(in.coordinator)) {
    return NotFound("coordinator: no handle named '" + in.coordinator + "'");
  }
  return Status::Ok();
}

domain::ReviewerCandidate ReviewService::Candidate(const exec::Profile& p) const {
  // The family a reviewer really is: derived from the model it resolves to (issue 12 item 6).
  return {p.name, domain::EffectiveFamily(p.family, exec::ResolveModelName(p, core_.daemon_env)).family};
}

StatusOr<domain::ReviewPlan> ReviewService::Plan(const StartReviewInput& in,
                                                 domain::ReviewMode mode, int cap) {
  const auto& cfg = core_.config.review;
  domain::ReviewPlanRequest req;
  req.mode = mode;
  req.writer_family = in.writer_family;
  req.cap = cap;
  // Reviewer candidates: every loaded profile that runs a model, in name order.
  for (const auto& p : core_.profiles.profiles) req.available.push_back(Candidate(p));
  auto candidate = [&](const std::string& name, const std::string& field)
      -> StatusOr<domain::ReviewerCandidate> {
    const exec::Profile* p = core_.profiles.Find(name);
    if (!p) return NotFound(field + ": no profile named '" + name + "'");
    return Candidate(*p);
  };
  bool debate = mode == domain::ReviewMode::kDebate;
  std::string primary = in.primary.empty() ? cfg.default_primary : in.primary;
  if (!primary.empty() && (debate || !in.primary.empty())) {
    auto c = candidate(primary, "primary");
    if (!c.ok()) return c.status();
    req.primary = c.value();
  }
  if (debate || !in.challengers.empty()) {
    for (const auto& name : in.challengers.empty() ? cfg.default_challengers : in.challengers) {
      auto c = candidate(name, "challenger");
      if (!c.ok()) return c.status();
      req.challengers.push_back(c.value());
    }
  }
  req.default_profile = cfg.default_profile;
  if (req.default_profile.empty() && !req.available.empty()) {
    req.default_profile = req.available.front().profile;
  }
  domain::ReviewPlan plan = domain::PlanReview(req);
  if (!plan.ok) return FailedPrecondition(plan.error);
  if (in.measure && plan.challengers.empty()) {
    return FailedPrecondition("measure: no foreign challenger to run beside the primary " +
                              plan.primary->profile);
  }
  return plan;
}

Status ReviewService::Begin(domain::Review& r, domain::ReviewMode mode,
                            const domain::ReviewPlan& plan, std::vector<int64_t>* to_dispatch) {
  if (mode == domain::ReviewMode::kStrong &&
      !store_.ClaimStrongSession(r.session, r.id, core_.clock.NowMs())) {
    r.blocked_by = "strong_session_used";
    verdicts_.Finalize(r, "BLOCKED", "",
                       "a Strong review was already used in session '" + r.session +
                           "' (at most one per coordinator session; not downgraded)",
                       {}, true);
    return Status::Ok();
  }
  if (mode == domain::ReviewMode::kMechanical) {
    verdicts_.Finalize(r, "APPROVED", "mechanical",
                       "mechanical skip: " + (plan.skip_reason.empty() ? std::string("no reviewer by mode")
                                                                        : plan.skip_reason),
                       {}, false);
    return Status::Ok();
  }
  return rounds_.LaunchFirst(r, to_dispatch);
}

void ReviewService::Start(StartReviewInput in, Done<ReviewView> done) {
  const bool known_key = !in.idem_key.empty() && store_.GetByKey(in.idem_key).has_value();
  if (known_key || (in.repo.empty() && in.commit.empty())) {
    return StartResolved(std::move(in), std::move(done));
  }
  if (in.repo.empty()) return done(InvalidArgument("repo: required when a commit is given"));
  if (in.repo[0] != '/') return done(InvalidArgument("repo: must be an absolute path"));
  if (in.commit.empty()) in.commit = "HEAD";
  if (!PlainRef(in.commit)) {
    return done(InvalidArgument("commit: '" + Utf8Prefix(in.commit, 200) + "' is not a commit name"));
  }
  // git runs on the helper pool; the review is made once the commit is known.
  const std::string repo = in.repo, commit = in.commit;
  auto shared = std::make_shared<StartReviewInput>(std::move(in));
  workspace_.ResolveCommit(repo, commit, [this, shared, done = std::move(done)](StatusOr<std::string> sha) mutable {
    if (!sha.ok()) return done(sha.status());
    shared->commit = sha.value();
    StartResolved(std::move(*shared), std::move(done));
  });
}

void ReviewService::StartResolved(StartReviewInput in, Done<ReviewView> done) {
  std::vector<int64_t> to_dispatch;
  int64_t id = 0;
  Status s = core_.batcher.Write([&]() -> Status {
    if (!in.idem_key.empty()) {
      if (auto existing = store_.GetByKey(in.idem_key)) {
        id = existing->id;
        return Status::Ok();
      }
    }
    domain::ReviewMode mode;
    if (Status v = Validate(in, &mode); !v.ok()) return v;
    int cap = in.cap < 0 ? core_.config.review.default_cap : in.cap;
    auto plan = Plan(in, mode, in.measure ? std::max(cap, 1) : cap);
    if (!plan.ok()) return plan.status();
    domain::Review r;
    r.mode = std::string(domain::ReviewModeName(mode));
    r.writer_family = in.writer_family;
    r.artifact_kind = in.artifact_kind;
    r.artifact = in.artifact;
    r.artifact_sha = Sha256Hex(in.artifact);
    r.cap = plan->cap;
    r.session = in.session.empty() ? in.coordinator : in.session;
    r.coordinator = in.coordinator;
    r.idem_key = in.idem_key;
    r.budget_usd = in.budget_usd;
    r.max_fix_rounds = in.max_fix_rounds.value_or(core_.config.review.max_fix_rounds);
    r.repo = in.repo;
    r.repo_commit = in.commit;
    r.measure = in.measure;
    r.created_ms = r.updated_ms = core_.clock.NowMs();
    nlohmann::json pj = {{"lines", nlohmann::json::array()},
                         {"challengers", nlohmann::json::array()}};
    for (const auto& l : plan->lines) pj["lines"].push_back({{"profile", l.profile}, {"family", l.family}});
    if (plan->primary) {
      pj["primary"] = {{"profile", plan->primary->profile}, {"family", plan->primary->family}};
    }
    for (const auto& c : plan->challengers) {
      pj["challengers"].push_back({{"profile", c.profile}, {"family", c.family}});
    }
    r.plan = pj.dump();
    r.id = id = store_.Insert(r);
    return Begin(r, mode, plan.value(), &to_dispatch);
  });
  if (!s.ok()) return done(s);
  rounds_.DispatchRounds(to_dispatch);
  AnswerAfterCommit(id, "the review", std::move(done));
}

void ReviewService::AnswerAfterCommit(int64_t id, const std::string& what, Done<ReviewView> done) {
  core_.batcher.AfterCommit([this, id, what, done = std::move(done)](bool ok) {
    if (!ok) return done(Unavailable(what + " could not be committed"));
    done(Get(id));
  });
}

Status ReviewService::CheckRegate(domain::Review& r, const RegateInput& in, const std::string& sha,
                                  bool* escalated) {
  const std::string id = std::to_string(r.id);
  const bool absent = r.verdict == "gate-absent";
  if (in.retry_absent && !absent) {
    return FailedPrecondition("retry_absent: review " + id + " is " + r.verdict +
                              ", not gate-absent; only an absent gate may be retried");
  }
  const bool same = sha == r.artifact_sha;
  if (same && !in.retry_absent) {
    return FailedPrecondition(
        "artifact: identical (sha-256 " + sha.substr(0, 12) + "…) to revision " +
        std::to_string(r.revision) + " of review " + id +
        "; a re-gate reviews a changed artifact (after gate-absent: --retry-absent)");
  }
  if (in.max_fix_rounds) {
    if (*in.max_fix_rounds < 0 || *in.max_fix_rounds > 20) {
      return InvalidArgument("max_fix_rounds: must be between 0 and 20");
    }
    r.max_fix_rounds = *in.max_fix_rounds;
  }
  if (same) return Status::Ok();  // retrying an absent gate is not a fix round
  if (r.fix_rounds >= r.max_fix_rounds) {
    *escalated = true;
    verdicts_.Tell(r, "escalation", "high",
                   "review " + id + ": fix-round limit reached (" + std::to_string(r.max_fix_rounds) +
                       ")",
                   "Review " + id + " has had " + std::to_string(r.fix_rounds) +
                       " fix rounds; the new revision was not reviewed. A person decides: accept "
                       "the current verdict (" + r.verdict + "), rework the change, or allow "
                       "another round with `review regate " + id + " --max-fix-rounds N`.",
                   {{"review_id", r.id}, {"fix_rounds", r.fix_rounds},
                    {"max_fix_rounds", r.max_fix_rounds}, {"verdict", r.verdict}});
    r.updated_ms = core_.clock.NowMs();
    store_.Update(r);  // a raised limit is kept even when escalated
    return Status::Ok();
  }
  r.fix_rounds += 1;
  return Status::Ok();
}

void ReviewService::Regate(int64_t id, RegateInput in, Done<ReviewView> done) {
  std::vector<int64_t> to_dispatch;
  bool escalated = false;
  std::string limit;
  Status s = core_.batcher.Write([&]() -> Status {
    auto r = store_.Get(id);
    if (!r) return NotFound("id: review " + std::to_string(id) + " does not exist");
    if (r->status != ReviewStatus::kDone) {
      return FailedPrecondition("review " + std::to_string(id) +
                                " is still running; wait for its verdict before re-gating");
    }
    if (r->mode == "mechanical" || r->blocked_by == "strong_session_used") {
      return FailedPrecondition("review " + std::to_string(id) + " has no reviewers to re-run");
    }
    if (in.artifact.empty()) return InvalidArgument("artifact: required");
    if (in.artifact.size() > kMaxArtifactBytes) return InvalidArgument("artifact: too large");
    const std::string sha = Sha256Hex(in.artifact);
    if (Status c = CheckRegate(*r, in, sha, &escalated); !c.ok()) return c;
    if (escalated) {
      limit = "review " + std::to_string(id) + ": fix-round limit (" +
              std::to_string(r->max_fix_rounds) + ") reached; escalated to the coordinator";
      return Status::Ok();
    }
    // The open foreign findings go on: the new revision must answer each (no re-rolls).
    r->carried = domain::ReconciledListToJson(
                     domain::OpenForeign(domain::ReconciledListFromText(r->findings)))
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (r->gate_id) {
      if (auto g = core_.gates.Get(r->gate_id); g && g->status == "open") {
        core_.gates.Resolve(g->id, "superseded", core_.clock.NowMs());
      }
    }
    r->gate_id = 0;
    r->artifact = std::move(in.artifact);
    r->artifact_sha = sha;
    r->revision += 1;
    r->status = ReviewStatus::kRunning;
    r->verdict.clear();
    r->termination.clear();
    r->reason.clear();
    r->findings = "[]";
    r->updated_ms = core_.clock.NowMs();
    store_.Update(*r);
    return rounds_.LaunchFirst(*r, &to_dispatch);
  });
  if (!s.ok()) return done(s);
  if (escalated) {
    return core_.batcher.AfterCommit([limit, done = std::move(done)](bool ok) {
      done(ok ? FailedPrecondition(limit) : Unavailable("the escalation could not be committed"));
    });
  }
  rounds_.DispatchRounds(to_dispatch);
  AnswerAfterCommit(id, "the re-gate", std::move(done));
}

void ReviewService::Wait(int64_t id, int64_t timeout_ms, Done<ReviewView> done) {
  auto v = Get(id);
  if (!v.ok() || v->review.status == ReviewStatus::kDone) return done(std::move(v));
  waiters_.Park(id, timeout_ms, std::move(done));
}

}  // namespace conclave::service
