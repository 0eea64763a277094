// Contract: see review_round_launcher.h.
#include "service/review_round_launcher.h"

#include "common/random.h"
#include "domain/carry_over.h"
#include "domain/family.h"
#include "domain/model_family.h"
#include "domain/review_brief.h"
#include "exec/profile_model.h"

namespace conclave::service {
namespace {
using domain::RoundState;
using domain::TaskState;
const std::string kReviewCoordinator(domain::kReviewSender);
}  // namespace

std::vector<domain::ReviewRound> RoundsOfRevision(store::ReviewStore& store, const domain::Review& r) {
  std::vector<domain::ReviewRound> out;
  for (const auto& x : store.Rounds(r.id)) {
    if (x.revision == r.revision) out.push_back(x);
  }
  return out;
}

int RoundLauncher::RoundDeadlineS(const exec::Profile& p) const {
  const int review_cap = core_.config.review.round_timeout_s;
  if (p.timeout_s <= 0) return review_cap;
  return review_cap > 0 ? std::min(p.timeout_s, review_cap) : p.timeout_s;
}

std::string RoundLauncher::Refusal(const domain::Review& r, const RoundSpec& spec,
                                  const std::string& family) {
  const std::string who = "reviewer " + spec.profile + " (family " + family + ")";
  if (family.empty()) return who + " has no family";
  if (spec.role == "primary") return "";
  if (domain::SameFamily(family, r.writer_family)) {
    return who + " is not foreign to the writer's family " + r.writer_family;
  }
  for (const auto& x : RoundsOfRevision(store_, r)) {
    if (x.round == spec.round) continue;
    if ((spec.role == "challenger" && x.role == "primary") ||
        (spec.role == "line" && x.role == "line")) {
      if (domain::SameFamily(family, x.family)) {
        return who + " shares the family of " + x.role + " " + x.profile;
      }
    }
  }
  return "";
}

Status RoundLauncher::Launch(domain::Review& r, const RoundSpec& spec,
                            std::vector<int64_t>* to_dispatch) {
  const exec::Profile* p = core_.profiles.Find(spec.profile);
  const std::string model = p ? exec::ResolveModelName(*p, core_.daemon_env) : "";
  const domain::FamilyCheck family = domain::EffectiveFamily(p ? p->family : "", model);
  std::string refusal = p ? Refusal(r, spec, family.family)
                          : "reviewer profile '" + spec.profile + "' is not loaded";
  if (!refusal.empty() && family.mismatch) refusal += " (" + family.warning + ")";
  domain::ReviewRound row;
  if (spec.retry == 0) {
    row.review_id = r.id;
    row.revision = r.revision;
    row.round = spec.round;
    row.role = spec.role;
    row.profile = spec.profile;
    row.family = family.family;
    row.model = model;
    row.created_ms = core_.clock.NowMs();
    if (!refusal.empty()) {
      row.state = RoundState::kFailed;
      row.error = "refused at dispatch: " + refusal;
      row.finished_ms = row.created_ms;
      store_.InsertRound(row);
      return Status::Ok();
    }
  } else if (!refusal.empty()) {
    return FailedPrecondition(refusal);
  }
  if (!core_.handles.Get(kReviewCoordinator)) {
    core_.handles.Insert({kReviewCoordinator, "coordinator", core_.clock.NowMs(), false});
  }
  terminals_.EnsureFor(spec.profile, workspace_.Root(), "review-");
  domain::RoundBriefInput in;
  in.review = &r;
  in.round = spec.round;
  in.role = spec.role;
  in.independent = spec.independent;
  for (const auto& x : RoundsOfRevision(store_, r)) {
    if (x.state == RoundState::kDone && x.round < spec.round) in.prior.push_back(x);
  }
  in.carried = domain::ReconciledListFromText(r.carried);
  in.artifact_file = ReviewWorkspace::ArtifactFile(r.artifact_kind);
  in.with_repo = !r.repo.empty();
  do {
    in.nonce = RandomHex(8);
  } while (!domain::FenceArtifact(r.artifact, in.nonce));
  domain::Task t;
  t.title = "review " + std::to_string(r.id) + " rev " + std::to_string(r.revision) + " round " +
            std::to_string(spec.round) + " (" + spec.role + ", " + spec.profile + ")";
  t.brief = domain::ReviewBriefToText(domain::BuildRoundBrief(in));
  t.status = TaskState::kReady;
  t.role = "reviewer";
  t.idem_key = "review:" + std::to_string(r.id) + ":rev" + std::to_string(r.revision) + ":round" +
               std::to_string(spec.round) + ":" + spec.profile +
               (spec.retry ? ":retry" + std::to_string(spec.retry) : "");
  t.coordinator = kReviewCoordinator;
  t.session = r.session;
  t.created_ms = t.updated_ms = core_.clock.NowMs();
  t.id = core_.tasks.Insert(t);
  if (spec.retry == 0) {
    row.task_id = t.id;
    store_.InsertRound(row);
  }
  to_dispatch->push_back(t.id);
  return Status::Ok();
}

RoundDirJob RoundLauncher::JobFor(const domain::Review& r, const domain::ReviewRound& round) const {
  return {round.task_id, workspace_.RoundBase(r.id, round.revision, round.round),
          ReviewWorkspace::ArtifactFile(r.artifact_kind), r.artifact, r.repo, r.repo_commit};
}

void RoundLauncher::PrepareRunning(const domain::Review& r) {
  std::vector<RoundDirJob> jobs;
  for (const auto& x : RoundsOfRevision(store_, r)) {
    if (x.state == RoundState::kRunning) jobs.push_back(JobFor(r, x));
  }
  workspace_.Prepare(std::move(jobs), [](std::vector<Status>) {});
}

void RoundLauncher::DispatchRounds(const std::vector<int64_t>& task_ids) {
  std::vector<RoundDirJob> jobs;
  for (int64_t task_id : task_ids) {
    auto round = store_.RoundForTask(task_id);
    auto review = round ? store_.Get(round->review_id) : std::nullopt;
    if (!round || !review) continue;
    jobs.push_back(JobFor(*review, *round));
  }
  std::vector<int64_t> ids;
  for (const auto& j : jobs) ids.push_back(j.task_id);
  workspace_.Prepare(std::move(jobs), [this, ids](std::vector<Status> results) {
    for (size_t i = 0; i < ids.size() && i < results.size(); ++i) {
      if (results[i].ok()) {
        Dispatch(ids[i]);
      } else {
        if (on_refused) on_refused(ids[i], results[i]);
      }
    }
  });
}

void RoundLauncher::Dispatch(int64_t task_id) {
  auto round = store_.RoundForTask(task_id);
  if (!round || !core_.tasks.Get(task_id)) return;
  auto review = store_.Get(round->review_id);
  const exec::Profile* p = core_.profiles.Find(round->profile);
  DispatchInput in;
  in.task_id = task_id;
  in.to = "@profile:" + round->profile;
  in.from = kReviewCoordinator;
  in.timeout_s = p ? RoundDeadlineS(*p) : core_.config.review.round_timeout_s;
  if (review && review->budget_usd > 0) {
    double spent = 0;
    for (const auto& x : store_.Rounds(review->id)) spent += x.cost_usd;
    in.budget_usd = std::max(0.0001, review->budget_usd - spent);
  }
  scheduler_.Dispatch(in, [this, task_id](StatusOr<domain::Dispatch> d) {
    if (!d.ok() && on_refused) on_refused(task_id, d.status());
  });
}

}  // namespace conclave::service
