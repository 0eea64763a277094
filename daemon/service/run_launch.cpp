// RunSupervisor's launch half: from a committed running dispatch to its worker's spawn (made
// on the launcher's thread) and back — the plan, the limits, a writer's resume, and what is
// recorded once the spawn returns or fails. The rest of the class is in run_supervisor.cpp.
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <utility>

#include "domain/resume_brief.h"
#include "common/loop_kick.h"
#include "domain/review_brief.h"
#include "exec/brief_renderer.h"
#include "exec/confined_runner.h"
#include "exec/git_head.h"
#include "exec/launch_plan.h"
#include "exec/partial_work.h"
#include "service/run_supervisor.h"

namespace conclave::service {
using domain::DispatchState;
using domain::StopReason;

void RunSupervisor::StartRuns(const std::vector<std::pair<int64_t, std::string>>& runs) {
  for (const auto& [id, token] : runs) Launch(id, token);
}

StatusOr<exec::LaunchPlan> RunSupervisor::Plan(const domain::Dispatch& d, const std::string& token,
                                               const domain::Task& t, const domain::Terminal& term,
                                               const exec::Profile& p,
                                               const std::string& resume) {
  exec::BriefInput b;
  b.resume = resume;
  b.task_id = t.id;
  b.title = t.title;
  b.brief = t.brief;
  b.role = t.role;
  b.hypothesis = t.hypothesis;
  b.scope = t.scope;
  b.validation = t.validation;
  b.attempt = d.attempt;
  b.require_contract = p.type == "cli" && t.role != "reviewer";
  // A reviewer's brief is structured parts, never parsed for sections (issue 12 item 1).
  if (t.role == "reviewer") b.review = domain::ReviewBriefForTask(t.brief);
  exec::LaunchRequest req;
  req.profile = &p;
  req.terminal = d.terminal;
  req.terminal_cwd = term.cwd;
  req.dispatch_dir = core_.DispatchDir(d.id);
  req.socket = core_.SocketPath();
  req.state_dir = core_.config.state_dir;
  req.config_file = core_.config.config_file;
  req.token = token;
  req.brief = p.template_text ? exec::RenderBriefWith(p.template_text, b)
                              : exec::RenderBrief(core_.config.profiles_dir, p.template_name, b);
  req.task_id = d.task_id;
  req.dispatch_id = d.id;
  req.budget_usd = d.budget_usd;
  req.reviewer = t.role == "reviewer";
  if (placement_) {
    if (auto place = placement_->PlaceFor(t, d)) {
      req.workdir = place->workdir;
      req.private_dir = place->private_dir;
    }
  }
  req.daemon_env = &core_.daemon_env;
  // Profiles and the daemon's environment are fixed for its life: built once per profile.
  auto [base, fresh] = base_env_.try_emplace(p.name);
  if (fresh) base->second = exec::WorkerBaseEnv(p, core_.daemon_env);
  req.base_env = &base->second;
  auto plan = exec::PlanLaunch(req);
  if (plan.ok()) {
    for (const auto& s : core_.redactor.secrets()) plan->secrets.push_back(s);
  }
  return plan;
}

exec::RunLimits RunSupervisor::LimitsFor(const domain::Dispatch& d, const exec::Profile& p) const {
  exec::RunLimits limits;
  int timeout = d.timeout_s > 0 ? d.timeout_s : p.timeout_s;
  limits.hard_timeout = std::chrono::seconds(timeout);
  limits.idle_timeout = std::chrono::seconds(p.idle_timeout_s);
  limits.idle_kill = p.idle_timeout_s > 0 ? std::chrono::seconds(p.idle_timeout_s * 3)
                                          : std::chrono::milliseconds(0);
  limits.kill_grace = std::chrono::milliseconds(core_.config.kill_grace_ms);
  limits.eof_grace = std::chrono::milliseconds(core_.config.eof_grace_ms);
  limits.log_cap_bytes = int64_t{core_.config.transcript_cap_mib} << 20;
  return limits;
}

bool RunSupervisor::LaunchResumed(const domain::Dispatch& d, const domain::Task& t,
                                  const domain::Terminal& term, const std::string& token) {
  // A first attempt has nothing to resume: no store read on the common path.
  if (d.attempt <= 1 || t.role != "writer") return false;
  auto point = domain::ResumeFrom(core_.dispatches.ForTask(d.task_id), d.id);
  if (!point) return false;
  auto& commands = core_.commands;
  auto& io = core_.io;
  resuming_.insert(d.id);
  auto sandbox = core_.GitSandboxFor(core_.profiles.Find(d.profile), term.cwd);
  boost::asio::post(core_.helpers, [this, &commands, &io, id = d.id, token, cwd = term.cwd,
                                    point = *point, sandbox] {
    std::string partial =
        exec::WithHelperRunner(commands, sandbox, [&](exec::CommandRunner& runner) {
          return exec::DescribePartialWork(runner, cwd, point.base_head);
        });
    Resume resume{domain::ResumeOpening(point, partial), point.base_head};
    PostToLoop(io, [this, id, token, resume = std::move(resume)] {
      // Not when shutdown already ended it; Launch checks again that the dispatch runs.
      if (resuming_.erase(id) > 0) Launch(id, token, resume);
    });
  });
  return true;
}

void RunSupervisor::Launch(int64_t dispatch_id, const std::string& token,
                           std::optional<Resume> resume) {
  auto d = core_.dispatches.Get(dispatch_id);
  if (!d || d->state != DispatchState::kRunning) return;
  if (stopping_) {
    return NotLaunched(dispatch_id, StopReason::kShutdown, "shutdown before the worker started");
  }
  auto t = core_.tasks.Get(d->task_id);
  auto term = core_.terminals.Get(d->terminal);
  const exec::Profile* p = core_.profiles.Find(d->profile);
  if (!t || !term || !p) {
    return NotLaunched(dispatch_id, StopReason::kSpawnFailed,
                       "spawn_failed: task, terminal or profile vanished");
  }
  if (t->status == domain::TaskState::kCancelled) {
    return NotLaunched(dispatch_id, StopReason::kCancelled,
                       "cancel: task cancelled before its worker started");
  }
  if (token.empty()) {
    return NotLaunched(dispatch_id, StopReason::kSpawnFailed, "spawn_failed: no dispatch token");
  }
  if (!resume && LaunchResumed(*d, *t, *term, token)) return;
  auto plan = Plan(*d, token, *t, *term, *p, resume ? resume->opening : "");
  if (plan.ok() && plan->sandboxed && core_.dispatch_sockets) {
    // The sandboxed worker's only way to the daemon: a socket that speaks for this dispatch.
    auto own = core_.dispatch_sockets->Open(dispatch_id);
    if (own.ok()) {
      plan->sandbox.socket_source = own.value();
    } else {
      // E.g. a state directory too long for a socket path: the daemon's own socket is bound
      // instead, where the worker is still known as this dispatch's by its ancestry.
      spdlog::warn("dispatch {}: {}; binding the daemon's socket instead", dispatch_id,
                   own.status().message());
    }
  }
  if (!plan.ok()) {
    return NotLaunched(dispatch_id, StopReason::kSpawnFailed,
                       "spawn_failed: " + plan.status().message());
  }
  // A writer's starting point is read on the launcher's thread just before the spawn, before
  // its worker can change anything: HEAD from the repository's files (a few small reads, no
  // git process, but in the worker's filesystem, which may hang). A resumed attempt continues
  // work that began at the chain's first start.
  const bool writer = t->role == "writer";
  const bool resumed = resume && !resume->base_head.empty();
  if (writer && !resumed) plan->head_of = term->cwd;
  exec::RunLimits limits = LimitsFor(*d, *p);
  // The spawn is made off the loop; until it is back, the child is known by this slot, which
  // the pending callback keeps alive as long as the spawn can write to it.
  auto slot = std::make_shared<std::atomic<pid_t>>(0);
  Launching& launching = launching_[dispatch_id] = Launching{};
  launching.pid = slot;
  launching.abandoned = plan->abandoned;
  launching.progress = plan->progress;
  launching.since_ms = core_.clock.NowMs();
  WatchSpawn(dispatch_id);
  plan->spec.early_pid = slot.get();
  Started started{resumed ? resume->base_head : "", term->cwd, p, writer, limits, slot,
                  plan->progress, resume.has_value()};
  core_.launcher.Start(std::move(plan.value()), limits, CallbacksFor(dispatch_id),
                       [this, dispatch_id, started = std::move(started)](
                           StatusOr<std::shared_ptr<exec::RunHandle>> run) {
                         Launched(dispatch_id, started, std::move(run));
                       });
}

void RunSupervisor::Launched(int64_t dispatch_id, const Started& started,
                             StatusOr<std::shared_ptr<exec::RunHandle>> run) {
  auto node = launching_.extract(dispatch_id);
  if (node.empty()) {
    // Given up as stuck (GiveUp) and its outcome recorded. The launcher never reports such a
    // launch; if one did, its run is stopped, unknown to the table.
    if (run.ok()) run.value()->Stop(StopReason::kSpawnFailed, "given up as stuck");
    return;
  }
  if (!run.ok()) {
    // Stopped meanwhile (or the spawn was not made because of it): the stop is the outcome.
    if (node.mapped().stop) {
      return NotLaunched(dispatch_id, node.mapped().stop->first, node.mapped().stop->second);
    }
    if (stopping_) {
      return NotLaunched(dispatch_id, StopReason::kShutdown, "shutdown before the worker started");
    }
    return NotLaunched(dispatch_id, StopReason::kSpawnFailed,
                       "spawn_failed: " + run.status().message());
  }
  // Recovery must be able to find this process group after a crash: the journal has it at
  // once (one write, no commit); the store gets it with the outcome, or in a regular group
  // commit if the run is still going after kRecordPidAfterMs.
  pid_t pid = run.value()->pid();
  const std::string head = started.writer && started.resumed_head.empty()
                               ? started.progress->start_head
                               : started.resumed_head;
  if (started.writer && started.resumed_head.empty() && started.progress->head_leased) {
    spdlog::warn("dispatch {}: a file of the git repository at {} is held by a file lease no one "
                 "let go of; no starting point is recorded, so its claims are judged against "
                 "git HEAD only (commits made during it are not counted as its changes)",
                 dispatch_id, started.cwd);
  }
  bool journaled = journal_.Record(dispatch_id, {pid, run.value()->start_time(), head});
  auto& active = runs_[dispatch_id];
  active.run = run.value();
  active.last_heartbeat_ms = core_.clock.NowMs();
  active.launch = LaunchRecord{pid, run.value()->start_time(), head};
  const exec::RunLimits& limits = started.limits;
  activity_.Watch(dispatch_id, pid,
                  limits.idle_timeout.count() > 0 ? limits.idle_timeout : limits.idle_kill);
  // (Not for a run stopped before it was back: its claims are not judged, and git must not
  // go into a directory whose spawn got stuck.)
  if (!head.empty() && !started.resumed && !node.mapped().stop) {
    SnapshotDirty(dispatch_id, started.cwd, core_.GitSandboxFor(started.profile, started.cwd));
  }
  // Cancelled, force-closed or shut down while the spawn was under way: stopped at once.
  if (node.mapped().stop) {
    active.run->Stop(node.mapped().stop->first, node.mapped().stop->second);
  } else if (stopping_) {
    active.run->Stop(StopReason::kShutdown, "shutdown");
  }
  if (!journaled) {
    spdlog::warn("dispatch {}: the spawn journal cannot be written; committing the pid now",
                 dispatch_id);
    RecordPid(dispatch_id);
    core_.batcher.Flush();
    return;
  }
  active.record_pid = core_.clock.After(kRecordPidAfterMs, [this, dispatch_id] {
    RecordPid(dispatch_id);
  });
}

void RunSupervisor::WatchSpawn(int64_t dispatch_id) {
  auto l = launching_.find(dispatch_id);
  if (l == launching_.end()) return;
  l->second.overdue = core_.clock.After(core_.config.spawn_timeout_ms,
                                        [this, dispatch_id] { SpawnOverdue(dispatch_id); });
}

void RunSupervisor::SpawnOverdue(int64_t dispatch_id) {
  auto l = launching_.find(dispatch_id);
  if (l == launching_.end()) return;  // back meanwhile
  Launching& spawn = l->second;
  pid_t child = spawn.pid->load();
  const std::string away = std::to_string(core_.clock.NowMs() - spawn.since_ms) + " ms";
  if (spawn.killed) {
    // Still not back a period after its child was killed: a wait SIGKILL cannot end (a FUSE
    // request its server already read, a dead device).
    return GiveUp(dispatch_id, "its spawn was still stuck in the kernel " + away +
                                   " after its launch, a period after its child was killed");
  }
  if (child == 0 && spawn.progress->on_thread.load()) {
    // The launcher's thread is on it and no child exists: preparing it, in the worker's
    // filesystem (its directory, its repository's HEAD, its program on PATH). No signal
    // reaches that; a whole period of it is a filesystem that hangs.
    if (!std::exchange(spawn.seen_preparing, true)) return WatchSpawn(dispatch_id);
    return GiveUp(dispatch_id,
                  "spawn_failed: the worker had not started " + away +
                      " after its launch: the launcher was stuck before its process existed, "
                      "reading or writing the worker's files (a hung filesystem under its "
                      "working directory, its repository or a directory on its PATH?)");
  }
  spawn.seen_preparing = false;
  if (child == 0 || child != spawn.seen) {
    spawn.seen = child;
    return WatchSpawn(dispatch_id);
  }
  spawn.abandoned->store(true);
  const bool killed = core_.launcher.AbortSpawn(*spawn.pid);
  spawn.killed = true;
  std::string detail = "spawn_failed: the worker had not started " + away +
                       " after its launch: its spawn (process " + std::to_string(child) +
                       ") was stuck in the kernel before the program ran (a hung filesystem "
                       "under its working directory or program?)" +
                       (killed ? " and was killed" : "; it could not be signalled");
  spdlog::error("dispatch {}: {}", dispatch_id, detail);
  if (!spawn.stop) spawn.stop.emplace(StopReason::kSpawnFailed, detail);
  WatchSpawn(dispatch_id);
}

void RunSupervisor::GiveUp(int64_t dispatch_id, const std::string& why) {
  auto l = launching_.find(dispatch_id);
  if (l == launching_.end()) return;
  if (!core_.launcher.ReplaceStuckThread(*l->second.progress)) {
    // Back meanwhile (its report is on its way to the loop), or a thread that cannot be
    // replaced (too many left stuck already, none to be had): waited for, and said.
    spdlog::critical("dispatch {}: {}; spawns behind it wait", dispatch_id, why);
    return WatchSpawn(dispatch_id);
  }
  // Given up (the launcher marked it, so its thread spawns nothing if it ever comes back).
  l->second.abandoned->store(true);
  auto node = launching_.extract(l);
  spdlog::critical("dispatch {}: {}; given up, and the launcher's thread replaced so the "
                   "spawns behind it go on",
                   dispatch_id, why);
  // A stop asked for meanwhile (a cancel, a kill as stuck) is the outcome; else this.
  auto [reason, detail] = node.mapped().stop.value_or(std::pair{StopReason::kSpawnFailed, why});
  NotLaunched(dispatch_id, reason, detail);
}

void RunSupervisor::NotLaunched(int64_t dispatch_id, StopReason reason, const std::string& detail) {
  spdlog::warn("dispatch {}: not started: {}", dispatch_id, detail);
  exec::RunOutcome o;
  o.stop = reason;
  o.stop_detail = detail;
  // Shutdown waits for this outcome too, so no dispatch is left running by a clean stop.
  ++unlaunched_;
  if (core_.dispatch_sockets) core_.dispatch_sockets->Close(dispatch_id);
  completion_.OnRunFinished(dispatch_id, o, 0, [this] {
    --unlaunched_;
    MaybeAllStopped();
  }, std::nullopt);
}

}  // namespace conclave::service
