#include "service/flow_service.h"
#include "common/loop_kick.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "domain/model_family.h"
#include "domain/review_policy.h"
#include "exec/profile_model.h"
#include "service/flow_git.h"
#include "service/flow_support.h"

namespace conclave::service {
namespace {
namespace fs = std::filesystem;
using domain::FlowStep;
constexpr size_t kMaxBriefBytes = 1 << 20;
// Flows the retention pass cleans at a time (per ended status): their rows are read in one
// loop turn, their worktrees removed on the helpers' thread, then their rows written in one.
constexpr int kCleanBatch = 100;

nlohmann::json Array(const std::vector<std::string>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : v) a.push_back(x);
  return a;
}
}  // namespace

std::string FlowService::WriterFamily(const exec::Profile& p) const {
  // What the writer really runs decides whose family the review must be foreign to.
  return domain::EffectiveFamily(p.family, exec::ResolveModelName(p, core_.daemon_env)).family;
}

Status FlowService::Validate(StartFlowInput& in) {
  if (in.repo.empty()) return InvalidArgument("repo: required (a git repository's directory)");
  std::error_code ec;
  fs::path repo = fs::weakly_canonical(fs::absolute(in.repo), ec);
  if (ec || !fs::is_directory(repo)) return InvalidArgument("repo: '" + in.repo + "' is not a directory");
  if (!fs::exists(repo / ".git")) return InvalidArgument("repo: '" + in.repo + "' is not a git repository");
  in.repo = repo.string();
  if (in.brief.empty()) return InvalidArgument("brief: required (a file, or - for stdin)");
  if (in.brief.size() > kMaxBriefBytes) return InvalidArgument("brief: larger than 1 MiB");
  if (in.writer.empty()) return InvalidArgument("writer: required (a profile or @family:F)");
  if (in.writer.rfind("@family:", 0) == 0) {
    // Any loaded model profile of that family (by the model it really runs), first by name.
    const std::string family = in.writer.substr(8);
    std::string chosen;
    for (const auto& p : core_.profiles.profiles) {
      if (p.type != "cli" || WriterFamily(p) != family) continue;
      if (chosen.empty() || p.name < chosen) chosen = p.name;
    }
    if (chosen.empty()) {
      return NotFound("writer: no loaded model profile of family '" + family +
                      "' (see `conclave profile list`)");
    }
    in.writer = chosen;
  }
  const exec::Profile* w = core_.profiles.Find(in.writer);
  if (!w) return NotFound("writer: no profile named '" + in.writer + "' (see `conclave profile list`)");
  if (!in.verify.empty() && !core_.profiles.Find(core_.config.flow.verify_profile)) {
    return FailedPrecondition("verify: the verify profile '" + core_.config.flow.verify_profile +
                              "' (config flow.verify_profile) is not loaded");
  }
  for (const auto& v : in.verify) {
    if (v.empty()) return InvalidArgument("verify: a command must not be empty");
  }
  if (in.review_mode.empty()) in.review_mode = core_.config.review.default_mode;
  if (!domain::ParseReviewMode(in.review_mode)) {
    return InvalidArgument("review_mode: '" + in.review_mode +
                           "' is not one of mechanical, simple, ordinary, strong, debate");
  }
  for (const auto& r : in.reviewers) {
    if (!core_.profiles.Find(r)) return NotFound("reviewer: no profile named '" + r + "'");
  }
  if (in.cap > 10) return InvalidArgument("cap: at most 10 challenger invocations");
  if (!(in.budget_usd >= 0) || in.budget_usd > 1e6) {
    return InvalidArgument("budget_usd: must be between 0 (no cap) and 1000000");
  }
  if (in.max_fix_rounds < 0) in.max_fix_rounds = 2;
  if (in.max_fix_rounds > 20) return InvalidArgument("max_fix_rounds: at most 20");
  if (in.ship.empty()) in.ship = "none";
  if (in.ship != "none" && in.ship != "merge") {
    return InvalidArgument("ship: '" + in.ship + "' is not one of none, merge");
  }
  if (in.coordinator.empty()) in.coordinator = "coordinator";
  if (!core_.handles.Get(in.coordinator)) {
    return NotFound("coordinator: no handle named '" + in.coordinator + "'");
  }
  return Status::Ok();
}

void FlowService::Start(StartFlowInput in, Done<FlowView> done) {
  int64_t id = 0;
  bool fresh = false;
  Status s = core_.batcher.Write([&]() -> Status {
    if (!in.key.empty()) {
      if (auto existing = store_.GetByKey(in.key)) {
        id = existing->id;
        return Status::Ok();
      }
    }
    if (Status v = Validate(in); !v.ok()) return v;
    domain::Flow f;
    f.idem_key = in.key;
    f.title = in.title;
    f.brief = in.brief;
    f.repo = in.repo;
    f.base = in.base;
    f.writer = in.writer;
    f.writer_family = WriterFamily(*core_.profiles.Find(in.writer));
    f.budget_usd = in.budget_usd;
    f.verify = Array(in.verify).dump();
    f.review_mode = in.review_mode;
    f.reviewers = Array(in.reviewers).dump();
    f.cap = in.cap;
    f.max_fix_rounds = in.max_fix_rounds;
    f.ship = in.ship;
    f.coordinator = in.coordinator;
    f.created_ms = f.updated_ms = core_.clock.NowMs();
    nlohmann::json history = nlohmann::json::array();
    history.push_back({{"step", "worktree"}, {"round", 1}, {"at_ms", f.created_ms},
                       {"note", "started"}});
    f.history = history.dump();
    f.id = id = store_.Insert(f);
    f.branch = "conclave/flow-" + std::to_string(id);
    f.worktree = core_.config.flow.worktree_root + "/flow-" + std::to_string(id);
    store_.Update(f);
    core_.Notify({f.coordinator, "flow", "normal", 0, 0,
                  "flow " + std::to_string(id) + ": started (worktree)",
                  "writer " + f.writer + " on " + f.branch + " in " + f.worktree,
                  nlohmann::json({{"flow_id", id}, {"step", "worktree"}}).dump()});
    fresh = true;
    return Status::Ok();
  });
  if (!s.ok()) return done(s);
  core_.batcher.AfterCommit([this, id, fresh, done = std::move(done)](bool ok) {
    if (!ok) return done(Unavailable("the flow could not be committed"));
    done(Get(id));
    if (fresh) Advance(id);
  });
}

FlowView FlowService::View(const domain::Flow& f) {
  FlowReads reads{store_, core_.tasks, core_.dispatches, review_store_};
  return ViewFlow(f, reads);
}

StatusOr<FlowView> FlowService::Get(int64_t id) {
  auto f = store_.Get(id);
  if (!f) return NotFound("id: flow " + std::to_string(id) + " does not exist");
  return View(*f);
}

StatusOr<std::vector<FlowView>> FlowService::List(const std::string& status, int limit) {
  const auto& all = domain::FlowStatuses();
  if (!status.empty() && std::find(all.begin(), all.end(), status) == all.end()) {
    return InvalidArgument("status: '" + status +
                           "' is not one of running, ready, needs_human, failed, cancelled");
  }
  std::vector<FlowView> out;
  for (const auto& f : store_.List(status, limit <= 0 ? 100 : std::min(limit, 1000))) {
    out.push_back(View(f));
  }
  return out;
}

void FlowService::Wait(int64_t id, int64_t timeout_ms, Done<FlowView> done) {
  auto v = Get(id);
  if (!v.ok() || v->flow.status != "running") return done(std::move(v));
  waiters_.Park(id, timeout_ms, std::move(done));
}

void FlowService::Cancel(int64_t id, Done<FlowView> done) {
  std::vector<int64_t> to_cancel;
  Status s = core_.batcher.Write([&]() -> Status {
    auto f = store_.Get(id);
    if (!f) return NotFound("id: flow " + std::to_string(id) + " does not exist");
    if (f->status != "running") return Status::Ok();
    if (f->task_id) to_cancel.push_back(f->task_id);
    if (f->step == FlowStep::kReview && f->review_id) {
      // The review's reviewers stop too: nothing keeps running (and spending) for a cancelled
      // flow.
      if (auto r = reviews_.Get(f->review_id); r.ok()) {
        for (const auto& round : r->rounds) {
          if (round.task_id && round.state == domain::RoundState::kRunning) {
            to_cancel.push_back(round.task_id);
          }
        }
      }
    }
    return Move(*f, FlowStep::kCancelled, "cancelled; the worktree " + f->worktree +
                                              " is kept for inspection (flow clean removes it)");
  });
  if (!s.ok()) return done(s);
  core_.batcher.AfterCommit([this, id, to_cancel, done = std::move(done)](bool ok) {
    if (!ok) return done(Unavailable("the cancellation could not be committed"));
    for (int64_t task : to_cancel) {
      auto t = core_.tasks.Get(task);
      if (t && !t->Finished()) tasks_.Cancel(task, "flow cancelled", [](auto) {});
    }
    PumpWriters();  // a flow waiting for this one's writer slot or SCOPE goes on
    done(Get(id));
  });
}

void FlowService::CleanEndedBefore(int64_t cutoff_ms) {
  // A bounded batch at a time (see kCleanBatch); a full batch asks for the next when it is
  // done, so a backlog drains batch by batch, until the daemon stops.
  if (stopped_) return;
  auto due = store_.Uncleaned({"ready", "cancelled"}, cutoff_ms, kCleanBatch);
  std::map<std::string, int> per_status;
  for (const auto& f : due) ++per_status[f.status];
  bool full = false;
  for (const auto& [status, n] : per_status) full |= n >= kCleanBatch;
  std::erase_if(due, [this](const domain::Flow& f) { return cleaning_.count(f.id) > 0; });
  if (due.empty()) return;
  CleanFlows(std::move(due), [this, full, cutoff_ms](StatusOr<std::vector<FlowView>> r) {
    if (!r.ok()) {
      spdlog::warn("retention: cleaning ended flows: {}", r.status().message());
      return;
    }
    if (full) CleanEndedBefore(cutoff_ms);
  });
}

void FlowService::Clean(int64_t id, Done<std::vector<FlowView>> done) {
  std::vector<domain::Flow> flows;
  if (id) {
    auto f = store_.Get(id);
    if (!f) return done(NotFound("id: flow " + std::to_string(id) + " does not exist"));
    if (f->status == "running") {
      return done(FailedPrecondition("flow " + std::to_string(id) +
                                     " is running; cancel it before cleaning"));
    }
    if (cleaning_.count(id)) {
      return done(FailedPrecondition("flow " + std::to_string(id) + " is being cleaned"));
    }
    flows.push_back(*f);
  } else {
    std::vector<std::string> ended;
    for (const auto& status : domain::FlowStatuses()) {
      if (status != "running") ended.push_back(status);
    }
    flows = store_.Uncleaned(ended, std::numeric_limits<int64_t>::max(), -1);
    std::erase_if(flows, [this](const domain::Flow& f) { return cleaning_.count(f.id) > 0; });
    // Newest first, as `flow list` shows them.
    std::sort(flows.begin(), flows.end(),
              [](const domain::Flow& a, const domain::Flow& b) { return a.id > b.id; });
  }
  CleanFlows(std::move(flows), std::move(done));
}

void FlowService::CleanFlows(std::vector<domain::Flow> flows, Done<std::vector<FlowView>> done) {
  auto& git = core_.commands;
  // Until its row is written, a flow being cleaned is neither reopened (ReopenIn) nor taken
  // by another clean: its worktree is going.
  for (const auto& f : flows) cleaning_.insert(f.id);
  boost::asio::post(core_.helpers, [this, &git, flows = std::move(flows),
                                    done = std::move(done)]() mutable {
    std::vector<std::pair<int64_t, std::string>> notes;
    for (const auto& f : flows) {
      notes.push_back({f.id, RemoveFlowWorktree(git, f.repo, f.worktree, f.branch)});
    }
    PostToLoop(core_.io, [this, notes = std::move(notes), done = std::move(done)] {
      // Out of cleaning_ before the write: should the write fail, the flow is not cleaned
      // (its worktree is gone all the same) and may be reopened or cleaned again.
      for (const auto& [fid, note] : notes) cleaning_.erase(fid);
      std::vector<int64_t> ids;
      Status s = core_.batcher.Write([&]() -> Status {
        // The flows' terminals (each flow's writers and its verify terminal), read once.
        std::map<int64_t, std::vector<domain::Terminal>> terminals;
        for (auto& t : core_.terminals.List(false)) {
          if (int64_t fid = domain::FlowOfTerminal(t.handle)) terminals[fid].push_back(t);
        }
        for (const auto& [fid, note] : notes) {
          auto f = store_.Get(fid);
          // Defensive: cleaning_ kept it from being reopened.
          if (!f || f->status == "running") continue;
          f->cleaned = true;
          f->note = note;
          f->updated_ms = core_.clock.NowMs();
          store_.Update(*f);
          if (auto mine = terminals.find(fid); mine != terminals.end()) {
            for (auto& t : mine->second) {
              if (t.state != domain::TerminalState::kIdle) continue;
              (void)domain::MoveTerminal(t, domain::TerminalState::kClosed);
              core_.terminals.Save(t);
              core_.handles.MarkClosed(t.handle);
            }
          }
          ids.push_back(fid);
        }
        return Status::Ok();
      });
      if (!s.ok()) return done(s);
      core_.batcher.AfterCommit([this, ids, done](bool ok) {
        if (!ok) return done(Unavailable("the clean-up could not be committed"));
        std::vector<FlowView> out;
        for (int64_t fid : ids) {
          if (auto v = Get(fid); v.ok()) out.push_back(std::move(v.value()));
        }
        done(std::move(out));
      });
    });
  });
}

void FlowService::OnDispatchFinished(const domain::Dispatch& d, const std::string&) {
  if (!store_.AnyRunning()) return;  // no flow to advance, no writer slot to hand out
  auto f = store_.ByTask(d.task_id);
  if (f && f->status == "running" && f->task_id == d.task_id) Advance(f->id);
  PumpWriters();  // a writer slot may have freed up
}

void FlowService::Resume() {
  for (const auto& f : store_.Running()) Advance(f.id);
}

}  // namespace conclave::service
