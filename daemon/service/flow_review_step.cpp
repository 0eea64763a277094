// FlowService's review step: the branch's diff reviewed (started once, re-gated on each fix
// round's new diff), the verdict turned into ready (and --ship merge), a fix round with the
// open findings, or needs_human. Loop thread only (git runs on the helper pool).
#include <nlohmann/json.hpp>

#include "common/utf8.h"
#include "service/flow_git.h"
#include "service/flow_service.h"
#include "service/flow_support.h"

namespace conclave::service {
namespace {
using domain::FlowStep;
using flow_support::Strings;

// The open findings of a verdict, by id, for the writer's fix brief.
std::string FindingsBrief(const domain::Review& r) {
  std::string out = "The review (" + r.mode + ", review " + std::to_string(r.id) + " rev " +
                    std::to_string(r.revision) + ") says " + r.verdict + ". Open findings:\n";
  auto j = nlohmann::json::parse(r.findings, nullptr, false);
  int n = 0;
  if (j.is_array()) {
    for (const auto& x : j) {
      if (!x.value("open", true)) continue;
      ++n;
      std::string path, line;
      if (x.contains("location") && x["location"].is_object()) {
        path = x["location"].value("path", "");
        if (x["location"].contains("line")) line = x["location"]["line"].dump();
      }
      out += "- " + x.value("id", std::string("?")) + " [" + x.value("severity", std::string("?")) +
             "] " + path + (line.empty() ? "" : ":" + line) + " " + x.value("title", std::string()) +
             ": " + x.value("detail", std::string()) + "\n";
    }
  }
  if (n == 0) out += "(none listed) " + r.reason + "\n";
  return out;
}

}  // namespace

// ---- review

void FlowService::StepReview(const domain::Flow& f) {
  if (f.review_id && f.review_round == f.round) {
    auto r = reviews_.Get(f.review_id);
    if (!r.ok()) return;
    if (r->review.status == domain::ReviewStatus::kDone) OnVerdict(f, r->review);
    return;  // running: OnReviewFinished advances it
  }
  auto& git = core_.commands;
  int64_t id = f.id;
  std::string wt = f.worktree, base_sha = f.base_sha;
  OffLoop<StatusOr<std::string>>(
      id, [&git, wt, base_sha] { return FlowDiff(git, wt, base_sha); },
      [this, id](StatusOr<std::string> diff) {
        auto fl = store_.Get(id);
        if (!fl || fl->status != "running" || fl->step != FlowStep::kReview) return;
        if (!diff.ok()) {
          return Change(id, FlowStep::kReview, [&](domain::Flow& x) {
            return Move(x, FlowStep::kFailed, diff.status().message(), "high");
          });
        }
        int round = fl->round;
        auto record = [this, id, round](StatusOr<ReviewView> v) {
          Change(id, FlowStep::kReview, [&](domain::Flow& x) -> Status {
            if (!v.ok()) {
              x.last_error = v.status().message();
              return Move(x, FlowStep::kNeedsHuman,
                          "the review could not start: " + v.status().message(), "high");
            }
            x.review_id = v->review.id;
            x.review_round = round;
            auto h = nlohmann::json::parse(x.history, nullptr, false);
            if (h.is_array()) {
              h.push_back({{"step", "review"}, {"round", round}, {"at_ms", core_.clock.NowMs()},
                           {"note", "review " + std::to_string(x.review_id) + " rev " +
                                        std::to_string(v->review.revision)}});
              x.history = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            }
            return Status::Ok();
          });
        };
        if (fl->review_id == 0) {
          StartReviewInput in;
          in.artifact = diff.value();
          in.writer_family = fl->writer_family;
          in.mode = fl->review_mode;
          auto reviewers = Strings(fl->reviewers);
          if (fl->review_mode == "debate" && !reviewers.empty()) {
            in.primary = reviewers.front();
            in.challengers.assign(reviewers.begin() + 1, reviewers.end());
          } else {
            in.challengers = reviewers;
          }
          in.cap = fl->cap;
          in.max_fix_rounds = fl->max_fix_rounds;  // the review escalates at the flow's limit
          in.idem_key = "flow:" + std::to_string(id) + ":review";
          in.coordinator = fl->coordinator;
          in.session = "flow-" + std::to_string(id);
          return reviews_.Start(std::move(in), record);
        }
        // A fix round: re-gate the same review on the new diff (unless that already happened
        // before a restart: the review already holds this diff).
        auto r = reviews_.Get(fl->review_id);
        if (r.ok() && (r->review.status == domain::ReviewStatus::kRunning ||
                       r->review.artifact == diff.value())) {
          return record(std::move(r));
        }
        RegateInput again;
        again.artifact = diff.value();
        again.max_fix_rounds = fl->max_fix_rounds;
        reviews_.Regate(fl->review_id, std::move(again), record);
      });
}

void FlowService::OnVerdict(const domain::Flow& f, const domain::Review& r) {
  if (r.verdict == "APPROVED") return Ship(f, "APPROVED by review " + std::to_string(r.id));
  if (r.verdict == "APPROVED_BY_SIGNOFF") {
    // A person's sign-off: ready, never merged by the daemon (--ship merge needs APPROVED).
    domain::Flow unshipped = f;
    unshipped.ship = "none";
    return Ship(unshipped, "APPROVED_BY_SIGNOFF (a person signed review " + std::to_string(r.id) +
                               " off; not merged by --ship)");
  }
  int64_t id = f.id;
  if (r.verdict == "NEEDS_CHANGES" || r.verdict == "BLOCKED") {
    std::string why = FindingsBrief(r);
    return Change(id, FlowStep::kReview, [&](domain::Flow& fl) { return FixRound(fl, why); });
  }
  // gate-absent, adversarial-stalemate: never ready without a person.
  std::string why = "review " + std::to_string(r.id) + " ended " + r.verdict +
                    (r.termination.empty() ? "" : " (" + r.termination + ")") + ": " + r.reason;
  Change(id, FlowStep::kReview, [&](domain::Flow& fl) {
    fl.last_error = Utf8Prefix(why, 4000);
    core_.Notify({fl.coordinator, "escalation", "high", 0, 0,
                  "flow " + std::to_string(fl.id) + " needs a decision: " + r.verdict,
                  Utf8Prefix(why, 8000), nlohmann::json({{"flow_id", fl.id}}).dump()});
    return Move(fl, FlowStep::kNeedsHuman, Utf8Prefix(why, 8000), "high");
  });
}

void FlowService::Ship(const domain::Flow& f, const std::string& why) {
  int64_t id = f.id;
  std::string merge = "git -C " + f.repo + " merge --ff-only " + f.branch;
  auto ready = [this, id, why, merge](const std::string& shipped) {
    Change(id, FlowStep::kReview, [&](domain::Flow& fl) {
      std::string note = why + ". Branch " + fl.branch + " is ready; merge it with: " + merge;
      if (!shipped.empty()) note += ". ship merge: " + shipped;
      return Move(fl, FlowStep::kReady, note);
    });
  };
  if (f.ship != "merge") return ready("");
  auto& git = core_.commands;
  std::string repo = f.repo, base = f.base, base_sha = f.base_sha, branch = f.branch;
  OffLoop<ShipResult>(
      id, [&git, repo, base, base_sha, branch] { return ShipMerge(git, repo, base, base_sha, branch); },
      [ready](ShipResult s) { ready(s.note); });
}

}  // namespace conclave::service
