#include "service/review_service.h"

#include "common/hash.h"
#include "domain/review_policy.h"

namespace conclave::service {
namespace {
constexpr size_t kMaxArtifactBytes = 4 << 20;
using domain::ReviewStatus;
}  // namespace

ReviewView ReviewService::View(const domain::Review& r) {
  ReviewView v;
  v.review = r;
  v.rounds = store_.Rounds(r.id);
  for (const auto& round : v.rounds) v.cost_usd += round.cost_usd;
  return v;
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
  if (in.mode.empty()) in.mode = "ordinary";
  auto m = domain::ParseReviewMode(in.mode);
  if (!m) {
    return InvalidArgument("mode: '" + in.mode +
                           "' is not one of mechanical, simple, ordinary, strong, debate");
  }
  *mode = *m;
  if (in.cap > 10) return InvalidArgument("cap: at most 10 challenger invocations");
  if (in.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
  if (in.coordinator.empty()) in.coordinator = "coordinator";
  if (!core_.handles.Get(in.coordinator)) {
    return NotFound("coordinator: no handle named '" + in.coordinator + "'");
  }
  return Status::Ok();
}

StatusOr<domain::ReviewPlan> ReviewService::Plan(const StartReviewInput& in,
                                                 domain::ReviewMode mode, int cap) {
  const auto& cfg = core_.config.review;
  domain::ReviewPlanRequest req;
  req.mode = mode;
  req.writer_family = in.writer_family;
  req.cap = cap;
  // Reviewer candidates: every loaded profile, in name order.
  for (const auto& p : core_.profiles.profiles) req.available.push_back({p.name, p.family});
  auto candidate = [&](const std::string& name, const std::string& field)
      -> StatusOr<domain::ReviewerCandidate> {
    const exec::Profile* p = core_.profiles.Find(name);
    if (!p) return NotFound(field + ": no profile named '" + name + "'");
    return domain::ReviewerCandidate{p->name, p->family};
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
  return plan;
}

Status ReviewService::Begin(domain::Review& r, domain::ReviewMode mode,
                            const domain::ReviewPlan& plan, std::vector<int64_t>* to_dispatch) {
  if (mode == domain::ReviewMode::kStrong &&
      !store_.ClaimStrongSession(r.session, r.id, core_.clock.NowMs())) {
    rounds_.Finalize(r, "BLOCKED", "",
                     "a Strong review was already used in session '" + r.session +
                         "' (at most one per coordinator session; not downgraded)",
                     nlohmann::json::array(), true);
    r.blocked_by = "strong_session_used";
    store_.Update(r);
    return Status::Ok();
  }
  if (mode == domain::ReviewMode::kMechanical) {
    rounds_.Finalize(r, "APPROVED", "mechanical",
                     "mechanical skip: " + (plan.skip_reason.empty() ? std::string("no reviewer by mode")
                                                                      : plan.skip_reason),
                     nlohmann::json::array(), false);
    return Status::Ok();
  }
  return rounds_.LaunchFirst(r, to_dispatch);
}

void ReviewService::Start(StartReviewInput in, Done<ReviewView> done) {
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
    auto plan = Plan(in, mode, cap);
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

void ReviewService::Regate(int64_t id, std::string artifact, Done<ReviewView> done) {
  std::vector<int64_t> to_dispatch;
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
    if (artifact.empty()) return InvalidArgument("artifact: required");
    if (artifact.size() > kMaxArtifactBytes) return InvalidArgument("artifact: too large");
    r->artifact = std::move(artifact);
    r->artifact_sha = Sha256Hex(r->artifact);
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
  rounds_.DispatchRounds(to_dispatch);
  AnswerAfterCommit(id, "the re-gate", std::move(done));
}

void ReviewService::Wait(int64_t id, int64_t timeout_ms, Done<ReviewView> done) {
  auto v = Get(id);
  if (!v.ok() || v->review.status == ReviewStatus::kDone) return done(std::move(v));
  if (timeout_ms <= 0) timeout_ms = 30000;
  timeout_ms = std::min<int64_t>(timeout_ms, 3600 * 1000);
  auto w = std::make_shared<Waiter>();
  w->done = std::move(done);
  waiters_[id].push_back(w);
  w->alarm = core_.clock.After(timeout_ms, [this, id, w] {
    if (!w->done) return;
    auto& list = waiters_[id];
    list.erase(std::remove(list.begin(), list.end(), w), list.end());
    std::exchange(w->done, nullptr)(Get(id));  // still running: the caller sees it running
  });
}

size_t ReviewService::waiter_count() const {
  size_t n = 0;
  for (const auto& [id, list] : waiters_) n += list.size();
  return n;
}

void ReviewService::ExpireWaiters() {
  std::vector<int64_t> ids;
  for (const auto& [id, list] : waiters_) ids.push_back(id);
  for (int64_t id : ids) WakeWaiters(id);
}

void ReviewService::WakeWaiters(int64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  auto list = std::move(it->second);
  waiters_.erase(it);
  for (auto& w : list) {
    if (!w->done) continue;
    w->alarm.reset();
    std::exchange(w->done, nullptr)(Get(id));
  }
}

}  // namespace conclave::service
