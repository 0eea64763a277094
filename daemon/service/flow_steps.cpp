// FlowService's engine: the worktree, implement and verify steps (review: flow_review_step.cpp),
// advanced by Advance whenever something a step waits for happened (a dispatch's outcome, a
// review's verdict, git work that came back) and once at startup. A step reads what the flow
// recorded and does only what is missing, so calling Advance again is always safe. Loop thread
// only (git runs on the helper pool).
#include <algorithm>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/utf8.h"
#include "service/flow_git.h"
#include "service/flow_service.h"
#include "service/flow_support.h"

namespace conclave::service {
namespace {
using domain::FlowStep;
using domain::TaskState;
using flow_support::Strings;
using flow_support::Tail;
constexpr size_t kOutputTail = 4000;

using flow_support::VerifyTerminal;
using flow_support::WriterTerminal;

std::string ImplementBrief(const domain::Flow& f) {
  std::string b = f.brief;
  if (f.round > 1) {
    b += "\n\n---\nFIX ROUND " + std::to_string(f.fix_rounds) + " (flow " + std::to_string(f.id) +
         ", round " + std::to_string(f.round) + "). Your earlier work is committed on " + f.branch +
         " in this directory. Fix the following, then finish as before:\n\n" + f.fix_brief + "\n";
  }
  return b;
}

}  // namespace

void FlowService::Advance(int64_t id) {
  if (busy_.count(id)) {
    again_.insert(id);
    return;
  }
  auto f = store_.Get(id);
  if (!f || f->status != "running") return;
  if (f->budget_usd > 0 && f->task_id == 0 &&
      (f->step == FlowStep::kImplement || f->step == FlowStep::kVerify)) {
    // Before a step starts new work: the flow's spend against its cap.
    double spent = View(*f).cost_usd;
    if (spent >= f->budget_usd) {
      char note[160];
      std::snprintf(note, sizeof note, "budget spent: $%.4f of the flow's $%.4f (--budget-usd)",
                    spent, f->budget_usd);
      return Change(id, f->step, [&](domain::Flow& fl) {
        return Move(fl, FlowStep::kNeedsHuman, note, "high");
      });
    }
  }
  switch (f->step) {
    case FlowStep::kWorktree:
      return StepWorktree(*f);
    case FlowStep::kImplement:
      return StepImplement(*f);
    case FlowStep::kVerify:
      return StepVerify(*f);
    case FlowStep::kReview:
      return StepReview(*f);
    default:
      return;
  }
}

Status FlowService::Move(domain::Flow& f, FlowStep to, const std::string& note,
                         const std::string& priority) {
  if (Status s = domain::MoveFlow(f, to, core_.clock.NowMs(), note); !s.ok()) return s;
  store_.Update(f);
  std::string name(domain::FlowStepName(to));
  nlohmann::json payload = {{"flow_id", f.id},   {"step", name},         {"status", f.status},
                            {"round", f.round},  {"fix_rounds", f.fix_rounds},
                            {"branch", f.branch}, {"worktree", f.worktree}, {"note", note}};
  core_.Notify({f.coordinator, "flow", priority, 0, 0,
                "flow " + std::to_string(f.id) + ": " + name + " (round " +
                    std::to_string(f.round) + ")",
                note, payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  if (to == FlowStep::kNeedsHuman) {
    // A decision gate over the flow: another round (the writer gets the person's reason) or
    // cancel. A review that stopped it has its own gate too (a sign-off makes the flow ready).
    domain::Gate g;
    g.flow_id = f.id;
    g.question = Utf8Prefix("Flow " + std::to_string(f.id) + " (" + f.branch + ") stopped: " + note +
                                " Decide: another-round (the writer goes again; your --reason is "
                                "added to its brief) or cancel.",
                            60000);
    g.options = R"(["another-round","cancel"])";
    g.created_ms = core_.clock.NowMs();
    g.id = core_.gates.Insert(g);
    core_.Notify({f.coordinator, "decision_gate", "high", 0, 0,
                  "flow " + std::to_string(f.id) + ": gate " + std::to_string(g.id) +
                      " asks a person how to go on",
                  g.question,
                  nlohmann::json({{"gate_id", g.id}, {"flow_id", f.id},
                                  {"options", nlohmann::json::parse(g.options)}})
                      .dump()});
  }
  if (domain::FlowStepTerminal(to)) {
    int64_t id = f.id;
    core_.batcher.AfterCommit([this, id](bool ok) {
      if (ok) WakeWaiters(id);
    });
  }
  return Status::Ok();
}

void FlowService::Change(int64_t id, FlowStep step, std::function<Status(domain::Flow&)> fn) {
  Status s = core_.batcher.Write([&]() -> Status {
    auto f = store_.Get(id);
    if (!f || f->status != "running" || f->step != step) return Status::Ok();  // moved on
    if (Status c = fn(*f); !c.ok()) {
      f->last_error = c.message();
      return Move(*f, FlowStep::kFailed, "internal error: " + c.message(), "high");
    }
    f->updated_ms = core_.clock.NowMs();
    store_.Update(*f);
    return Status::Ok();
  });
  if (!s.ok()) {
    spdlog::error("flow {}: recording a step failed: {}", id, s.message());
    return;
  }
  core_.batcher.AfterCommit([this, id](bool ok) {
    if (ok) Advance(id);
  });
}

Status FlowService::FixRound(domain::Flow& f, const std::string& why) {
  if (f.fix_rounds >= f.max_fix_rounds) {
    std::string note = "needs a person: " + std::to_string(f.max_fix_rounds) +
                       " fix round(s) spent and another is needed. " + why;
    f.last_error = Utf8Prefix(why, 4000);
    core_.Notify({f.coordinator, "escalation", "high", 0, 0,
                  "flow " + std::to_string(f.id) + " needs a decision: fix rounds exhausted",
                  Utf8Prefix(note, 8000),
                  nlohmann::json({{"flow_id", f.id}, {"branch", f.branch}}).dump()});
    return Move(f, FlowStep::kNeedsHuman, Utf8Prefix(note, 8000), "high");
  }
  f.fix_rounds += 1;
  f.round += 1;
  f.fix_brief = Utf8Prefix(why, 64000);
  return Move(f, FlowStep::kImplement,
              "fix round " + std::to_string(f.fix_rounds) + ": " + Utf8Prefix(why, 2000));
}

Status FlowService::MakeStepTask(domain::Flow& f, const std::string& what, const std::string& role,
                                 const std::string& brief) {
  std::string key = domain::FlowTaskKey(f.id, f.round, what);
  if (auto existing = core_.tasks.GetByKey(key)) {
    f.task_id = existing->id;
    return Status::Ok();
  }
  domain::Task t;
  t.title = "flow " + std::to_string(f.id) + " round " + std::to_string(f.round) + " " + what +
            (f.title.empty() ? "" : ": " + f.title);
  t.brief = brief;
  t.role = role;
  t.status = TaskState::kReady;
  t.idem_key = key;
  t.coordinator = f.coordinator;
  // What is left of the flow's budget caps the task across its retries too.
  if (f.budget_usd > 0) t.budget_usd = std::max(0.0001, f.budget_usd - View(f).cost_usd);
  t.created_ms = t.updated_ms = core_.clock.NowMs();
  f.task_id = t.id = core_.tasks.Insert(t);
  auto h = nlohmann::json::parse(f.history, nullptr, false);
  if (h.is_array()) {
    h.push_back({{"step", std::string(domain::FlowStepName(f.step))}, {"round", f.round},
                 {"at_ms", t.created_ms}, {"note", what + " task " + std::to_string(t.id)},
                 {"task_id", t.id}});
    f.history = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return Status::Ok();
}

void FlowService::DispatchStepTask(const domain::Flow& f, const std::string& to) {
  DispatchInput in;
  in.task_id = f.task_id;
  in.to = to;
  in.from = f.coordinator;
  // What is left of the flow's budget caps this run too (its cost is watched as it streams).
  if (f.budget_usd > 0) in.budget_usd = std::max(0.0001, f.budget_usd - View(f).cost_usd);
  int64_t id = f.id, task_id = f.task_id;
  FlowStep step = f.step;
  scheduler_.Dispatch(in, [this, id, task_id, step](StatusOr<domain::Dispatch> d) {
    if (d.ok()) return;
    Change(id, step, [&](domain::Flow& fl) -> Status {
      // Refused because an earlier call already dispatched it: nothing went wrong.
      if (fl.task_id != task_id || !core_.dispatches.ForTask(task_id).empty()) return Status::Ok();
      fl.last_error = d.status().message();
      return Move(fl, FlowStep::kNeedsHuman,
                  "the " + std::string(domain::FlowStepName(step)) + " task " +
                      std::to_string(task_id) + " could not be dispatched: " + d.status().message(),
                  "high");
    });
  });
}

int FlowService::WritersRunning(int64_t except) {
  int n = 0;
  for (const auto& x : store_.Running()) {
    if (x.id == except || x.step != FlowStep::kImplement || x.task_id == 0) continue;
    auto t = core_.tasks.Get(x.task_id);
    if (t && t->status == TaskState::kDispatched) ++n;
  }
  return n;
}

bool FlowService::ScopeBusy(const domain::Flow& f) {
  auto mine = domain::FlowScopes(f.brief);
  if (mine.empty()) return false;
  for (const auto& x : store_.Running()) {
    if (x.id == f.id || x.repo != f.repo || x.step != FlowStep::kImplement || x.task_id == 0) continue;
    auto t = core_.tasks.Get(x.task_id);
    if (!t || (t->status != TaskState::kDispatched && t->status != TaskState::kPending)) continue;
    if (domain::ScopesOverlap(mine, domain::FlowScopes(x.brief))) return true;
  }
  return false;
}

void FlowService::PumpWriters() {
  for (const auto& x : store_.Running()) {
    if (x.step != FlowStep::kImplement || x.task_id == 0) continue;
    auto t = core_.tasks.Get(x.task_id);
    if (t && t->status == TaskState::kReady && core_.dispatches.ForTask(x.task_id).empty()) {
      Advance(x.id);
    }
  }
}

// ---- worktree

void FlowService::StepWorktree(const domain::Flow& f) {
  auto& git = core_.commands;
  int64_t id = f.id;
  std::string repo = f.repo, base = f.base, branch = f.branch, path = f.worktree;
  OffLoop<WorktreeMade>(
      id, [&git, repo, base, branch, path] { return MakeFlowWorktree(git, repo, base, branch, path); },
      [this, id](WorktreeMade m) {
        Change(id, FlowStep::kWorktree, [&](domain::Flow& fl) -> Status {
          if (!m.status.ok()) {
            fl.last_error = m.status.message();
            return Move(fl, FlowStep::kFailed, "worktree: " + m.status.message(), "high");
          }
          fl.base = m.base;
          fl.base_sha = fl.head_sha = m.base_sha;
          // The flow's own terminals: one writer per worktree, the verify commands beside it.
          std::vector<std::pair<std::string, std::string>> terms = {
              {WriterTerminal(fl.id), fl.writer}};
          if (!Strings(fl.verify).empty()) {
            terms.push_back({VerifyTerminal(fl.id), core_.config.flow.verify_profile});
          }
          for (const auto& [handle, profile] : terms) {
            if (core_.handles.Get(handle)) continue;
            domain::Terminal t{handle, profile, fl.worktree, domain::TerminalState::kIdle, 0,
                               core_.clock.NowMs()};
            core_.handles.Insert({handle, "terminal", t.created_ms, false});
            core_.terminals.Insert(t);
          }
          return Move(fl, FlowStep::kImplement,
                      "worktree " + fl.worktree + " on " + fl.branch + " from " + fl.base + " (" +
                          fl.base_sha.substr(0, 12) + ")");
        });
      });
}

// ---- implement

void FlowService::StepImplement(const domain::Flow& f) {
  if (f.task_id == 0) {
    return Change(f.id, FlowStep::kImplement, [&](domain::Flow& fl) {
      return MakeStepTask(fl, "implement", "writer", ImplementBrief(fl));
    });
  }
  auto t = core_.tasks.Get(f.task_id);
  if (!t) {
    return Change(f.id, FlowStep::kImplement, [&](domain::Flow& fl) {
      return Move(fl, FlowStep::kFailed, "the implement task is gone", "high");
    });
  }
  auto dispatches = core_.dispatches.ForTask(t->id);
  if (t->status == TaskState::kReady && dispatches.empty()) {
    // At most flow.max_parallel_writers implement steps run at once; the others wait here
    // and are advanced again when a dispatch finishes (OnDispatchFinished).
    if (WritersRunning(f.id) >= std::max(1, core_.config.flow.max_parallel_writers)) return;
    // Flows that declare overlapping SCOPE: paths in one repository implement one at a time.
    if (ScopeBusy(f)) return;
    return DispatchStepTask(f, WriterHandle(f));
  }
  if (t->status == TaskState::kDispatched || t->status == TaskState::kPending) return;  // running
  if (t->status == TaskState::kCompleted) return AfterImplement(f);
  std::string why = "implement round " + std::to_string(f.round) + " ended " +
                    std::string(domain::TaskStateName(t->status));
  if (!dispatches.empty() && !dispatches.back().evidence.empty()) {
    why += ": " + dispatches.back().evidence;
  }
  Change(f.id, FlowStep::kImplement, [&](domain::Flow& fl) {
    fl.last_error = Utf8Prefix(why, 4000);
    return Move(fl, FlowStep::kNeedsHuman, Utf8Prefix(why, 4000), "high");
  });
}

void FlowService::AfterImplement(const domain::Flow& f) {
  auto& git = core_.commands;
  int64_t id = f.id, task_id = f.task_id;
  std::string wt = f.worktree;
  std::string msg = "conclave flow " + std::to_string(f.id) + " round " + std::to_string(f.round) +
                    ": the writer's uncommitted work" + (f.title.empty() ? "" : "\n\n" + f.title);
  OffLoop<StatusOr<std::string>>(
      id, [&git, wt, msg] { return CommitLeftovers(git, wt, msg); },
      [this, id, task_id](StatusOr<std::string> head) {
        Change(id, FlowStep::kImplement, [&](domain::Flow& fl) -> Status {
          if (fl.task_id != task_id) return Status::Ok();
          if (!head.ok()) {
            fl.last_error = head.status().message();
            return Move(fl, FlowStep::kFailed, head.status().message(), "high");
          }
          if (head.value() == fl.head_sha) {
            fl.last_error = "round " + std::to_string(fl.round) + ": the writer changed nothing";
            return Move(fl, FlowStep::kNeedsHuman,
                        "round " + std::to_string(fl.round) +
                            ": the writer changed nothing in the worktree",
                        "high");
          }
          fl.head_sha = head.value();
          fl.verify_index = 0;
          bool verify = !Strings(fl.verify).empty();
          return Move(fl, verify ? FlowStep::kVerify : FlowStep::kReview,
                      "round " + std::to_string(fl.round) + " committed at " +
                          fl.head_sha.substr(0, 12));
        });
      });
}

// ---- verify

void FlowService::StepVerify(const domain::Flow& f) {
  auto commands = Strings(f.verify);
  if (f.verify_index >= static_cast<int>(commands.size())) {
    return Change(f.id, FlowStep::kVerify, [&](domain::Flow& fl) {
      return Move(fl, FlowStep::kReview,
                  "round " + std::to_string(fl.round) + ": every verify command passed");
    });
  }
  const std::string& cmd = commands[f.verify_index];
  std::string what = "verify" + std::to_string(f.verify_index);
  if (f.task_id == 0) {
    return Change(f.id, FlowStep::kVerify,
                  [&](domain::Flow& fl) { return MakeStepTask(fl, what, "tester", cmd + "\n"); });
  }
  auto t = core_.tasks.Get(f.task_id);
  if (!t) return;
  auto dispatches = core_.dispatches.ForTask(t->id);
  if (t->status == TaskState::kReady && dispatches.empty()) return DispatchStepTask(f, VerifyTerminal(f.id));
  if (t->status == TaskState::kDispatched || t->status == TaskState::kPending) return;
  int64_t task_id = f.task_id;
  if (t->status == TaskState::kCompleted) {
    return Change(f.id, FlowStep::kVerify, [&](domain::Flow& fl) -> Status {
      if (fl.task_id != task_id) return Status::Ok();
      auto h = nlohmann::json::parse(fl.history, nullptr, false);
      if (h.is_array()) {
        h.push_back({{"step", "verify"}, {"round", fl.round}, {"at_ms", core_.clock.NowMs()},
                     {"note", "passed: " + cmd}, {"task_id", task_id}});
        fl.history = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      }
      fl.verify_index += 1;
      fl.task_id = 0;
      return Status::Ok();
    });
  }
  std::string why = "The verify command `" + cmd + "` failed";
  if (!dispatches.empty()) {
    const auto& d = dispatches.back();
    why += " (exit " + std::to_string(d.exit_code) + ")";
    auto result = nlohmann::json::parse(d.result, nullptr, false);
    std::string out = result.is_object() ? result.value("text", "") : "";
    if (!out.empty()) why += ". The tail of its output:\n" + Tail(out, kOutputTail);
    if (!d.evidence.empty()) why += "\n" + d.evidence;
  }
  Change(f.id, FlowStep::kVerify, [&](domain::Flow& fl) -> Status {
    if (fl.task_id != task_id) return Status::Ok();
    return FixRound(fl, why);
  });
}

}  // namespace conclave::service
