// ReviewService: starting, reading, waiting for and re-gating reviews; the Phase 0 report.
#include "service/review_service.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/clock.h"
#include "domain/fingerprint.h"
#include "domain/reconcile.h"
#include "domain/review_policy.h"

namespace conclave::service {
namespace {
constexpr size_t kMaxArtifactBytes = 4 << 20;

std::string Sha(const std::string& text) {
  // Content identity for the artifact (not a security hash): FNV-1a 64 of the bytes.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

ReviewService::ReviewService(Core& core, MessagingService& messaging, TaskService& tasks)
    : core_(core), messaging_(messaging), tasks_(tasks), store_(core.db) {
  tasks_.on_dispatch_finished = [this](const store::DispatchRecord& d) { OnDispatchFinished(d); };
}

ReviewView ReviewService::View(const store::ReviewRecord& r) {
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
    if (in.artifact.empty()) return InvalidArgument("artifact: required (a file, or - for stdin)");
    if (in.artifact.size() > kMaxArtifactBytes) {
      return InvalidArgument("artifact: " + std::to_string(in.artifact.size()) +
                             " bytes exceeds the limit of " + std::to_string(kMaxArtifactBytes));
    }
    static const char* kKinds[] = {"diff", "code", "doc", "spec"};
    bool kind_ok = false;
    for (const char* k : kKinds) kind_ok |= in.artifact_kind == k;
    if (!kind_ok) {
      return InvalidArgument("artifact_kind: '" + in.artifact_kind +
                             "' is not one of diff, code, doc, spec");
    }
    if (in.writer_family.empty()) return InvalidArgument("writer_family: required");
    if (in.mode.empty()) in.mode = "ordinary";
    auto mode = domain::ParseReviewMode(in.mode);
    if (!mode) {
      return InvalidArgument("mode: '" + in.mode +
                             "' is not one of mechanical, simple, ordinary, strong, debate");
    }
    int cap = in.cap < 0 ? core_.config.review.default_cap : in.cap;
    if (cap > 10) return InvalidArgument("cap: at most 10 challenger invocations");
    if (in.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
    if (in.coordinator.empty()) in.coordinator = "coordinator";
    if (!core_.handles.Get(in.coordinator)) {
      return NotFound("coordinator: no handle named '" + in.coordinator + "'");
    }
    // Reviewer candidates: every loaded profile, in name order.
    domain::ReviewPlanRequest req;
    req.mode = *mode;
    req.writer_family = in.writer_family;
    req.cap = cap;
    for (const auto& p : core_.profiles.profiles) req.available.push_back({p.name, p.family});
    auto candidate = [&](const std::string& name, const std::string& field)
        -> StatusOr<domain::ReviewerCandidate> {
      const exec::Profile* p = core_.profiles.Find(name);
      if (!p) return NotFound(field + ": no profile named '" + name + "'");
      return domain::ReviewerCandidate{p->name, p->family};
    };
    std::string primary = in.primary.empty() ? core_.config.review.default_primary : in.primary;
    if (!primary.empty() && (*mode == domain::ReviewMode::kDebate || !in.primary.empty())) {
      auto c = candidate(primary, "primary");
      if (!c.ok()) return c.status();
      req.primary = c.value();
    }
    auto challengers = in.challengers.empty() ? core_.config.review.default_challengers
                                              : in.challengers;
    if (*mode == domain::ReviewMode::kDebate || !in.challengers.empty()) {
      for (const auto& name : challengers) {
        auto c = candidate(name, "challenger");
        if (!c.ok()) return c.status();
        req.challengers.push_back(c.value());
      }
    }
    req.default_profile = core_.config.review.default_profile;
    if (req.default_profile.empty() && !req.available.empty()) {
      req.default_profile = req.available.front().profile;
    }
    domain::ReviewPlan plan = domain::PlanReview(req);
    if (!plan.ok) return FailedPrecondition(plan.error);

    store::ReviewRecord r;
    r.mode = std::string(domain::ReviewModeName(*mode));
    r.writer_family = in.writer_family;
    r.artifact_kind = in.artifact_kind;
    r.artifact = in.artifact;
    r.artifact_sha = Sha(in.artifact);
    r.cap = plan.cap;
    r.session = in.session.empty() ? in.coordinator : in.session;
    r.coordinator = in.coordinator;
    r.idem_key = in.idem_key;
    r.budget_usd = in.budget_usd;
    r.created_ms = r.updated_ms = NowMs();
    nlohmann::json pj = {{"lines", nlohmann::json::array()},
                         {"challengers", nlohmann::json::array()}};
    for (const auto& l : plan.lines) pj["lines"].push_back({{"profile", l.profile}, {"family", l.family}});
    if (plan.primary) pj["primary"] = {{"profile", plan.primary->profile}, {"family", plan.primary->family}};
    for (const auto& c : plan.challengers) {
      pj["challengers"].push_back({{"profile", c.profile}, {"family", c.family}});
    }
    r.plan = pj.dump();
    r.id = store_.Insert(r);
    id = r.id;

    if (*mode == domain::ReviewMode::kStrong &&
        !store_.ClaimStrongSession(r.session, r.id, NowMs())) {
      Finalize(r, "BLOCKED", "", "a Strong review was already used in session '" + r.session +
                                     "' (at most one per coordinator session; not downgraded)",
               nlohmann::json::array(), true);
      r.blocked_by = "strong_session_used";
      store_.Update(r);
      return Status::Ok();
    }
    if (*mode == domain::ReviewMode::kMechanical) {
      Finalize(r, "APPROVED", "mechanical",
               "mechanical skip: " + (plan.skip_reason.empty() ? std::string("no reviewer by mode")
                                                                : plan.skip_reason),
               nlohmann::json::array(), false);
      return Status::Ok();
    }
    if (*mode == domain::ReviewMode::kDebate) {
      return LaunchRound(r, 0, "primary", plan.primary->profile, plan.primary->family, 0,
                         &to_dispatch);
    }
    for (size_t i = 0; i < plan.lines.size(); ++i) {
      Status ls = LaunchRound(r, static_cast<int>(i), "line", plan.lines[i].profile,
                              plan.lines[i].family, 0, &to_dispatch);
      if (!ls.ok()) return ls;
    }
    return Status::Ok();
  });
  if (!s.ok()) return done(s);
  DispatchRounds(to_dispatch);
  core_.batcher.AfterCommit([this, id, done = std::move(done)](bool ok) {
    if (!ok) return done(Unavailable("the review could not be committed"));
    done(Get(id));
  });
}

void ReviewService::Regate(int64_t id, std::string artifact, Done<ReviewView> done) {
  std::vector<int64_t> to_dispatch;
  Status s = core_.batcher.Write([&]() -> Status {
    auto r = store_.Get(id);
    if (!r) return NotFound("id: review " + std::to_string(id) + " does not exist");
    if (r->status != "done") {
      return FailedPrecondition("review " + std::to_string(id) +
                                " is still running; wait for its verdict before re-gating");
    }
    if (r->mode == "mechanical" || r->blocked_by == "strong_session_used") {
      return FailedPrecondition("review " + std::to_string(id) + " has no reviewers to re-run");
    }
    if (artifact.empty()) return InvalidArgument("artifact: required");
    if (artifact.size() > kMaxArtifactBytes) return InvalidArgument("artifact: too large");
    r->artifact = std::move(artifact);
    r->artifact_sha = Sha(r->artifact);
    r->revision += 1;
    r->status = "running";
    r->verdict.clear();
    r->termination.clear();
    r->reason.clear();
    r->findings = "[]";
    r->updated_ms = NowMs();
    store_.Update(*r);
    auto plan = nlohmann::json::parse(r->plan);
    if (r->mode == "debate") {
      return LaunchRound(*r, 0, "primary", plan["primary"]["profile"], plan["primary"]["family"], 0,
                         &to_dispatch);
    }
    int i = 0;
    for (const auto& l : plan["lines"]) {
      Status ls = LaunchRound(*r, i++, "line", l["profile"], l["family"], 0, &to_dispatch);
      if (!ls.ok()) return ls;
    }
    return Status::Ok();
  });
  if (!s.ok()) return done(s);
  DispatchRounds(to_dispatch);
  core_.batcher.AfterCommit([this, id, done = std::move(done)](bool ok) {
    if (!ok) return done(Unavailable("the re-gate could not be committed"));
    done(Get(id));
  });
}

void ReviewService::Wait(int64_t id, int64_t timeout_ms, Done<ReviewView> done) {
  auto v = Get(id);
  if (!v.ok() || v->review.status == "done") return done(std::move(v));
  if (timeout_ms <= 0) timeout_ms = 30000;
  timeout_ms = std::min<int64_t>(timeout_ms, 3600 * 1000);
  auto w = std::make_shared<Waiter>();
  w->done = std::move(done);
  w->timer = std::make_unique<boost::asio::steady_timer>(core_.io,
                                                         std::chrono::milliseconds(timeout_ms));
  waiters_[id].push_back(w);
  w->timer->async_wait([this, id, w](const boost::system::error_code& ec) {
    if (ec || !w->done) return;
    auto& list = waiters_[id];
    list.erase(std::remove(list.begin(), list.end(), w), list.end());
    auto cb = std::move(w->done);
    w->done = nullptr;
    cb(Get(id));  // still running: the caller sees status "running"
  });
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
    w->timer->cancel();
    auto cb = std::move(w->done);
    w->done = nullptr;
    cb(Get(id));
  }
}

nlohmann::json ReviewService::Report(int64_t since_ms) {
  nlohmann::json out;
  // Tool-call reliability per profile, from every dispatch and every review round.
  std::map<std::string, nlohmann::json> profiles;
  auto st = core_.db.Prepare(
      "SELECT profile, family, COUNT(*), SUM(state = 'succeeded'), "
      "SUM(state = 'timed_out' OR failure_kind IN ('timeout', 'heartbeat_lost')), "
      "SUM(state IN ('failed', 'timed_out')), SUM(failure_kind = 'contract_violation'), "
      "COALESCE(SUM(cost_usd), 0) FROM dispatches WHERE profile != '' AND finished_ms > 0 AND "
      "created_ms >= ? GROUP BY profile, family ORDER BY profile");
  st.Bind(1, since_ms);
  while (st.Step()) {
    profiles[st.Text(0)] = {{"profile", st.Text(0)},     {"family", st.Text(1)},
                            {"invocations", st.Int(2)},  {"clean", st.Int(3)},
                            {"timed_out", st.Int(4)},    {"failed", st.Int(5)},
                            {"malformed", st.Int(6)},    {"cost_usd", st.Real(7)}};
  }
  auto rs = core_.db.Prepare(
      "SELECT profile, COALESCE(SUM(malformed), 0) FROM review_rounds WHERE created_ms >= ? "
      "GROUP BY profile");
  rs.Bind(1, since_ms);
  while (rs.Step()) {
    auto& p = profiles[rs.Text(0)];
    if (!p.contains("profile")) {
      p = {{"profile", rs.Text(0)}, {"family", ""}, {"invocations", 0}, {"clean", 0},
           {"timed_out", 0}, {"failed", 0}, {"malformed", 0}, {"cost_usd", 0.0}};
    }
    p["malformed"] = p["malformed"].get<int64_t>() + rs.Int(1);
    // Those dispatches exited cleanly but answered garbage: not clean invocations.
    p["clean"] = std::max<int64_t>(0, p["clean"].get<int64_t>() - rs.Int(1));
  }
  out["profiles"] = nlohmann::json::array();
  for (auto& [name, p] : profiles) {
    int64_t n = p["invocations"].get<int64_t>();
    p["clean_rate"] = n ? static_cast<double>(p["clean"].get<int64_t>()) / n : 0.0;
    out["profiles"].push_back(p);
  }
  // Incremental value: unique findings per family by the materially-different rubric.
  std::map<std::string, int64_t> unique;
  std::map<std::string, int64_t> terminations;
  int64_t reviews = 0;
  for (const auto& r : store_.List(100000, since_ms)) {
    if (r.status != "done") continue;
    ++reviews;
    if (!r.termination.empty()) terminations[r.termination]++;
    auto findings = nlohmann::json::parse(r.findings, nullptr, false);
    if (!findings.is_array()) continue;
    std::vector<domain::ReconciledFinding> rf;
    for (const auto& f : findings) {
      domain::ReconciledFinding x;
      auto parsed = domain::ParseFindingsJson({{"findings", {f}}});
      if (!parsed.ok || parsed.findings.empty()) continue;
      x.finding = parsed.findings[0];
      x.family = f.value("family", "");
      x.from_foreign = f.value("foreign", false);
      x.disposition = f.value("disposition", "");
      x.open = f.value("open", true);
      rf.push_back(std::move(x));
    }
    for (const auto& [family, n] : domain::UniqueFindingsPerFamily(rf)) unique[family] += n;
  }
  out["unique_findings_per_family"] = unique;
  out["reviews"] = reviews;
  out["terminations"] = terminations;
  auto rate = [&](const char* k) {
    return reviews ? static_cast<double>(terminations[k]) / static_cast<double>(reviews) : 0.0;
  };
  for (const char* k : {"converged", "no_movement", "cap_reached"}) out[k] = terminations[k];
  out["convergence_rate"] = rate("converged");
  out["no_movement_rate"] = rate("no_movement");
  out["cap_reached_rate"] = rate("cap_reached");
  return out;
}

}  // namespace conclave::service
