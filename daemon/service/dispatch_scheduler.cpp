// TaskService: accepting a dispatch, choosing a terminal (queueing when none is free), and
// spawning the worker once the "running" row has committed.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/random.h"
#include "domain/cost.h"
#include "domain/failure_kind.h"
#include "exec/brief_renderer.h"
#include "exec/child_process.h"
#include "exec/proc_info.h"
#include "service/task_service.h"
#include "service/transcript_follower.h"

extern char** environ;

namespace conclave::service {
namespace fs = std::filesystem;

TaskService::TaskService(Core& core, MessagingService& messaging)
    : core_(core), messaging_(messaging), wake_timer_(core.io) {
  core_.worker_report_hook = [this](domain::MessageRecord& m, const std::string& token) {
    return ValidateWorkerReport(m, token);
  };
  core_.liveness_hook = [this](const std::vector<int64_t>& ids) { return Liveness(ids); };
}

TaskService::~TaskService() = default;

void TaskService::EmitToCoordinator(const std::string& coordinator, const std::string& type,
                                    const std::string& priority, int64_t task_id,
                                    int64_t dispatch_id, const std::string& subject,
                                    const std::string& body, const std::string& payload) {
  domain::MessageRecord m;
  m.type = type;
  m.priority = priority;
  m.from = "conclaved";
  m.to = coordinator.empty() ? "coordinator" : coordinator;
  m.subject = subject.substr(0, domain::kMaxSubjectBytes);
  m.body = body.substr(0, domain::kMaxBodyBytes);
  m.payload = payload;
  m.task_id = task_id;
  m.dispatch_id = dispatch_id;
  m.thread_id = task_id ? "task-" + std::to_string(task_id) : "";
  core_.Emit(m);
}

Status TaskService::CheckBudgets(const store::TaskRecord& t, const std::string& family,
                                 double per_dispatch) {
  const auto& b = core_.config.budgets;
  std::vector<std::tuple<std::string, double, double>> caps;
  double task_cap = t.budget_usd > 0 ? t.budget_usd : b.per_task_usd;
  caps.emplace_back("per-task cap of task " + std::to_string(t.id), task_cap,
                    core_.dispatches.TaskSpend(t.id));
  if (!t.session.empty() && b.per_session_usd > 0) {
    caps.emplace_back("per-session cap of session " + t.session, b.per_session_usd,
                      core_.tasks.SessionSpend(t.session));
  }
  if (!family.empty()) {
    auto it = b.per_family_daily_usd.find(family);
    if (it != b.per_family_daily_usd.end()) {
      int64_t day_start = NowMs() - NowMs() % (24 * 3600 * 1000LL);
      caps.emplace_back("daily cap of family " + family, it->second,
                        core_.dispatches.FamilySpendSince(family, day_start));
    }
  }
  (void)per_dispatch;
  domain::BudgetCheck check = domain::CheckCaps(caps, 0);
  if (!check.ok) {
    char buf[160];
    std::snprintf(buf, sizeof buf, ": spent $%.4f of $%.4f", check.spent, check.cap);
    return ResourceExhausted("budget: the " + check.cap_name + " is used up" + buf +
                             " (raise it with `conclave task update --budget-usd` or the config)");
  }
  return Status::Ok();
}

void TaskService::Dispatch(const DispatchInput& in, Done<store::DispatchRecord> done) {
  if (stopping_) return done(Unavailable("conclaved is shutting down"));
  std::vector<int64_t> to_spawn;
  int64_t new_id = 0;
  Status s = core_.batcher.Write([&]() -> Status {
    auto t = core_.tasks.Get(in.task_id);
    if (!t) return NotFound("task: task " + std::to_string(in.task_id) + " does not exist");
    const std::string id = std::to_string(t->id);
    if (t->status == "pending") {
      std::string deps;
      for (int64_t dep : core_.tasks.Deps(t->id)) {
        auto d = core_.tasks.Get(dep);
        if (d && d->status != "completed") deps += (deps.empty() ? "" : ", ") + std::to_string(dep);
      }
      return FailedPrecondition("task " + id + " is pending: dependencies not completed: " + deps);
    }
    if (t->status == "blocked") {
      if (t->blocked_reason == "circuit_open") {
        return FailedPrecondition(
            "task " + id + " is blocked: circuit open after " + std::to_string(t->breaker_count) +
            " consecutive failures with fingerprint " + t->breaker_fp +
            "; re-plan it (`conclave task update " + id +
            " --hypothesis H | --scope S | --validation V`) — switching the model is not a re-plan");
      }
      return FailedPrecondition("task " + id + " is blocked (" + t->blocked_reason +
                                "); resolve that first (`conclave gate list`)");
    }
    if (t->status == "dispatched") {
      return FailedPrecondition("task " + id + " is already dispatched; wait for its worker_done "
                                "or cancel it");
    }
    if (t->status == "completed" || t->status == "cancelled") {
      return FailedPrecondition("task " + id + " is already " + t->status);
    }
    if (in.timeout_s < 0) return InvalidArgument("timeout_s: must not be negative");
    if (in.budget_usd < 0) return InvalidArgument("budget_usd: must not be negative");
    // The target must name at least one open terminal.
    auto members = in.to == "@idle" ? ResolveAnyTerminal() : messaging_.ResolveAddress(in.to, "");
    if (!members.ok()) return members.status();
    std::string family;
    int terminals = 0;
    for (const auto& h : members.value()) {
      auto term = core_.terminals.Get(h);
      if (!term) continue;
      if (term->state == "closed" || term->state == "draining" || term->state == "offline") {
        if (in.to[0] != '@') {
          return FailedPrecondition("to: terminal '" + h + "' is " + term->state +
                                    " and takes no new work");
        }
        continue;
      }
      if (!core_.profiles.Find(term->profile)) {
        if (in.to[0] != '@') {
          return FailedPrecondition("to: terminal '" + h + "' uses profile '" + term->profile +
                                    "', which is not loaded");
        }
        continue;
      }
      ++terminals;
      family = core_.FamilyOf(*term);
    }
    if (terminals == 0) {
      return NotFound("to: '" + in.to + "' names no open worker terminal (create one with "
                      "`conclave terminal create --profile P`)");
    }
    Status budget = CheckBudgets(*t, in.to[0] == '@' ? "" : family, in.budget_usd);
    if (!budget.ok()) return budget;

    store::DispatchRecord d;
    d.task_id = t->id;
    d.target = in.to;
    d.state = "queued";
    auto previous = core_.dispatches.ForTask(t->id);
    d.attempt = previous.empty() ? 1 : previous.back().attempt + 1;
    d.coordinator = in.from.empty() ? t->coordinator : in.from;
    if (!core_.handles.Get(d.coordinator)) {
      return NotFound("from: no handle named '" + d.coordinator + "'");
    }
    d.created_ms = NowMs();
    d.timeout_s = in.timeout_s;
    d.budget_usd = in.budget_usd > 0 ? in.budget_usd : core_.config.budgets.per_dispatch_usd;
    d.review_round = in.review_round;
    d.id = core_.dispatches.Insert(d);
    new_id = d.id;
    if (!in.extra_brief.empty() || in.reviewer) dispatch_extras_[d.id] = in;
    t->status = "dispatched";
    t->last_target = in.to;
    t->updated_ms = NowMs();
    core_.tasks.Update(*t);
    to_spawn = PumpLocked();
    return Status::Ok();
  });
  if (!s.ok()) return done(s);
  SpawnAfterCommit(to_spawn);
  core_.batcher.AfterCommit([this, new_id, done = std::move(done)](bool ok) {
    if (!ok) return done(Unavailable("dispatch could not be committed"));
    auto d = core_.dispatches.Get(new_id);
    if (!d) return done(Internal("dispatch vanished"));
    done(*d);
  });
}

bool TaskService::CoolingDown(const std::string& profile, int64_t now, int64_t* until) {
  auto st = core_.db.Prepare("SELECT until_ms FROM cooldowns WHERE profile = ? AND until_ms > ?");
  st.Bind(1, profile).Bind(2, now);
  if (!st.Step()) return false;
  if (until) *until = st.Int(0);
  return true;
}

std::vector<std::tuple<std::string, int64_t, std::string>> TaskService::Cooldowns() {
  std::vector<std::tuple<std::string, int64_t, std::string>> out;
  auto st = core_.db.Prepare(
      "SELECT profile, until_ms, reason FROM cooldowns WHERE until_ms > ? ORDER BY profile");
  st.Bind(1, NowMs());
  while (st.Step()) out.emplace_back(st.Text(0), st.Int(1), st.Text(2));
  return out;
}

StatusOr<std::vector<std::string>> TaskService::ResolveAnyTerminal() {
  std::vector<std::string> out;
  for (const auto& t : core_.terminals.List(false)) out.push_back(t.handle);
  if (out.empty()) return NotFound("to: there are no worker terminals");
  return out;
}

std::vector<store::TerminalRecord> TaskService::Candidates(const store::DispatchRecord& d) {
  std::vector<store::TerminalRecord> out;
  auto members = d.target == "@idle" ? ResolveAnyTerminal() : messaging_.ResolveAddress(d.target, "");
  if (!members.ok()) return out;
  for (const auto& h : members.value()) {
    auto t = core_.terminals.Get(h);
    if (t) out.push_back(*t);
  }
  return out;
}

std::vector<int64_t> TaskService::PumpLocked() {
  std::vector<int64_t> started;
  if (stopping_) return started;
  int64_t now = NowMs();
  int64_t next_wake = 0;
  auto note_wake = [&](int64_t at) {
    if (at > now && (next_wake == 0 || at < next_wake)) next_wake = at;
  };
  for (auto d : core_.dispatches.InState("queued")) {
    if (d.not_before_ms > now) {
      note_wake(d.not_before_ms);
      continue;
    }
    auto task = core_.tasks.Get(d.task_id);
    if (!task) continue;
    const store::TerminalRecord* chosen = nullptr;
    const exec::Profile* profile = nullptr;
    auto candidates = Candidates(d);
    bool any_open = false;
    for (const auto& t : candidates) any_open |= t.state != "closed" && t.state != "draining";
    if (!any_open) {
      d.state = "cancelled";
      d.failure_kind = "cancelled";
      d.evidence = "no open terminal left for " + d.target;
      d.finished_ms = now;
      core_.dispatches.Update(d);
      SetTaskStatus(*task, "ready");
      EmitToCoordinator(d.coordinator, "escalation", "high", d.task_id, d.id,
                        "dispatch " + std::to_string(d.id) + " dropped from the queue",
                        d.evidence + "; task " + std::to_string(d.task_id) +
                            " is ready to be dispatched elsewhere",
                        "");
      continue;
    }
    for (const auto& t : candidates) {
      if (t.state != "idle") continue;
      const exec::Profile* p = core_.profiles.Find(t.profile);
      if (!p) continue;
      int64_t until = 0;
      if (CoolingDown(p->name, now, &until)) {
        note_wake(until);
        continue;
      }
      if (core_.dispatches.CountRunningForProfile(p->name) >= p->max_concurrent) continue;
      chosen = &t;
      profile = p;
      break;
    }
    if (!chosen) continue;
    Status budget = CheckBudgets(*task, profile->family, d.budget_usd);
    if (!budget.ok()) {
      // The cap was reached while this dispatch waited: refuse it now, visibly.
      d.state = "failed";
      d.failure_kind = "budget_exceeded";
      d.evidence = budget.message();
      d.finished_ms = now;
      core_.dispatches.Update(d);
      SetTaskStatus(*task, "failed");
      EmitToCoordinator(d.coordinator, "escalation", "high", d.task_id, d.id,
                        "dispatch " + std::to_string(d.id) + " refused: budget", budget.message(),
                        "");
      continue;
    }
    // The task's remaining budget caps this run too (passed to the CLI, enforced by the daemon).
    double task_cap = task->budget_usd > 0 ? task->budget_usd : core_.config.budgets.per_task_usd;
    if (task_cap > 0) {
      double remaining = std::max(0.0001, task_cap - core_.dispatches.TaskSpend(task->id));
      if (d.budget_usd <= 0 || remaining < d.budget_usd) d.budget_usd = remaining;
    }
    d.terminal = chosen->handle;
    d.profile = profile->name;
    d.family = profile->family;
    d.state = "running";
    d.token = RandomHex(24);
    d.started_ms = now;
    d.last_output_ms = now;
    int timeout = d.timeout_s > 0 ? d.timeout_s : profile->timeout_s;
    d.deadline_ms = now + timeout * 1000LL;
    core_.dispatches.Update(d);
    core_.terminals.SetState(chosen->handle, "busy", d.id);
    nlohmann::json payload = {{"dispatch_id", d.id}, {"terminal", d.terminal},
                              {"profile", d.profile}, {"family", d.family},
                              {"attempt", d.attempt}, {"deadline_unix_ms", d.deadline_ms}};
    EmitToCoordinator(d.coordinator, "dispatch", "normal", d.task_id, d.id,
                      "task " + std::to_string(d.task_id) + " dispatched to " + d.terminal,
                      "attempt " + std::to_string(d.attempt) + " on " + d.terminal + " (" +
                          d.profile + ", " + d.family + ")",
                      payload.dump());
    started.push_back(d.id);
  }
  if (next_wake) ScheduleWake(next_wake);
  return started;
}

void TaskService::Pump() {
  std::vector<int64_t> ids;
  Status s = core_.batcher.Write([&]() -> Status {
    ids = PumpLocked();
    return Status::Ok();
  });
  if (!s.ok()) {
    spdlog::error("scheduling failed: {}", s.message());
    return;
  }
  SpawnAfterCommit(ids);
}

void TaskService::ScheduleWake(int64_t at_ms) {
  if (wake_at_ms_ != 0 && wake_at_ms_ <= at_ms && wake_at_ms_ > NowMs()) return;
  wake_at_ms_ = at_ms;
  wake_timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(at_ms - NowMs(), 0) + 5));
  wake_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    wake_at_ms_ = 0;
    Pump();
  });
}

void TaskService::SpawnAfterCommit(const std::vector<int64_t>& ids) {
  if (ids.empty()) return;
  core_.batcher.AfterCommit([this, ids](bool ok) {
    if (!ok) return;
    for (int64_t id : ids) Spawn(id);
  });
}

std::string TaskService::RenderBrief(const store::TaskRecord& t, const exec::Profile& p,
                                     const store::DispatchRecord& d) {
  exec::BriefInput b;
  b.task_id = t.id;
  b.title = t.title;
  b.brief = t.brief;
  b.role = t.role;
  b.hypothesis = t.hypothesis;
  b.scope = t.scope;
  b.validation = t.validation;
  b.attempt = d.attempt;
  auto extra = dispatch_extras_.find(d.id);
  if (extra != dispatch_extras_.end()) b.extra = extra->second.extra_brief;
  b.require_contract = p.type == "cli" && t.role != "reviewer";
  return exec::RenderBrief(core_.config.profiles_dir, p.template_name, b);
}

void TaskService::Spawn(int64_t dispatch_id) {
  auto d = core_.dispatches.Get(dispatch_id);
  if (!d || d->state != "running") return;
  auto t = core_.tasks.Get(d->task_id);
  auto term = core_.terminals.Get(d->terminal);
  const exec::Profile* p = core_.profiles.Find(d->profile);
  auto fail = [&](const std::string& why) {
    spdlog::warn("dispatch {}: spawn failed: {}", dispatch_id, why);
    exec::RunOutcome o;
    o.stopped = true;
    o.stop_reason = "spawn_failed: " + why;
    OnRunFinished(dispatch_id, o);
  };
  if (!t || !term || !p) return fail("task, terminal or profile vanished");
  if (t->status == "cancelled") {
    exec::RunOutcome o;
    o.stopped = true;
    o.stop_reason = "cancel: task cancelled before its worker started";
    return OnRunFinished(dispatch_id, o);
  }

  std::string dir = DispatchDir(d->id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create " + dir + ": " + ec.message());
  chmod(dir.c_str(), 0700);

  // Environment: the daemon's own, then isolation, then the profile's, then Conclave's.
  std::map<std::string, std::string> daemon_env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (k.rfind("CONCLAVE_DISPATCH", 0) == 0 || k.rfind("CONCLAVE_TASK", 0) == 0 ||
        k == "NOTIFY_SOCKET" || k == "WATCHDOG_USEC" || k == "WATCHDOG_PID" ||
        k == "LISTEN_FDS" || k == "LISTEN_PID") {
      continue;
    }
    daemon_env[k] = kv.substr(eq + 1);
  }
  std::map<std::string, std::string> env = daemon_env;
  exec::TemplateContext ctx;
  ctx.environ = &daemon_env;
  ctx.vars["CWD"] = term->cwd;
  ctx.vars["DISPATCH_DIR"] = dir;
  ctx.vars["HOME"] = daemon_env.count("HOME") ? daemon_env["HOME"] : "/tmp";
  ctx.vars["TMPDIR"] = daemon_env.count("TMPDIR") ? daemon_env["TMPDIR"] : "/tmp";
  if (p->isolate_home) {
    std::string home = dir + "/home", tmp = dir + "/tmp";
    fs::create_directories(home, ec);
    fs::create_directories(tmp, ec);
    env["HOME"] = ctx.vars["HOME"] = home;
    env["TMPDIR"] = ctx.vars["TMPDIR"] = tmp;
    env["XDG_CONFIG_HOME"] = home + "/.config";
    env["XDG_CACHE_HOME"] = home + "/.cache";
    env["XDG_DATA_HOME"] = home + "/.local/share";
    env["XDG_STATE_HOME"] = home + "/.local/state";
  }
  char budget_buf[32];
  std::snprintf(budget_buf, sizeof budget_buf, "%.4f", d->budget_usd);
  ctx.vars["budget_usd"] = budget_buf;
  ctx.vars["findings_schema"] = "";
  std::vector<std::string> secrets;
  for (const auto& [k, v] : p->env) {
    auto r = exec::ResolveTemplate(v, k, ctx);
    if (!r.ok()) return fail("profile " + p->name + " env " + r.status().message());
    env[k] = r->value;
    secrets.insert(secrets.end(), r->secrets.begin(), r->secrets.end());
  }
  for (const auto& [path_t, content_t] : p->files) {
    auto path = exec::ResolveTemplate(path_t, "files", ctx);
    auto content = exec::ResolveTemplate(content_t, path_t, ctx);
    if (!path.ok()) return fail("profile " + p->name + " files: " + path.status().message());
    if (!content.ok()) return fail("profile " + p->name + " files: " + content.status().message());
    fs::create_directories(fs::path(path->value).parent_path(), ec);
    std::ofstream(path->value) << content->value;
    chmod(path->value.c_str(), 0600);
    secrets.insert(secrets.end(), content->secrets.begin(), content->secrets.end());
  }
  std::string socket = core_.listener;
  if (socket.rfind("unix:", 0) == 0) socket = socket.substr(5);
  std::string workdir = term->cwd;
  if (p->workdir == "dispatch") {
    workdir = dir + "/work";
    fs::create_directories(workdir, ec);
  }
  env["PWD"] = workdir;  // some CLIs (opencode) trust $PWD over the real working directory
  env["CONCLAVE_SOCKET"] = socket;
  env["CONCLAVE_TERMINAL_HANDLE"] = d->terminal;
  env["CONCLAVE_TASK_ID"] = std::to_string(d->task_id);
  env["CONCLAVE_DISPATCH_ID"] = std::to_string(d->id);
  env["CONCLAVE_DISPATCH_TOKEN"] = d->token;
  secrets.push_back(d->token);

  exec::SpawnSpec spec;
  spec.cwd = workdir;
  for (const auto& a : p->command) {
    auto r = exec::ResolveTemplate(a, "command", ctx);
    if (!r.ok()) return fail("profile " + p->name + " command: " + r.status().message());
    spec.argv.push_back(r->value);
  }
  if (d->budget_usd > 0) {
    for (const auto& a : p->budget_flag) {
      auto r = exec::ResolveTemplate(a, "budget_flag", ctx);
      if (r.ok()) spec.argv.push_back(r->value);
    }
  }
  auto extra = dispatch_extras_.find(d->id);
  if ((extra != dispatch_extras_.end() && extra->second.reviewer) || t->role == "reviewer") {
    for (const auto& a : p->review_args) spec.argv.push_back(a);
  }
  std::string brief = RenderBrief(*t, *p, *d);
  std::ofstream(dir + "/brief.txt") << brief;
  if (p->brief == "arg") spec.argv.push_back(brief);
  for (const auto& [k, v] : env) spec.env.push_back(k + "=" + v);

  auto child = exec::SpawnChild(spec);
  if (!child.ok()) return fail(child.status().message());

  Status s = core_.batcher.Write([&]() -> Status {
    auto cur = core_.dispatches.Get(dispatch_id);
    if (!cur) return Status::Ok();
    cur->pid = child->pid;
    cur->proc_start = child->start_time;
    core_.dispatches.Update(*cur);
    return Status::Ok();
  });
  if (!s.ok()) spdlog::error("dispatch {}: recording pid failed: {}", dispatch_id, s.message());
  core_.batcher.Flush();  // recovery must be able to find this process group after a crash

  exec::RunLimits limits;
  int timeout = d->timeout_s > 0 ? d->timeout_s : p->timeout_s;
  limits.hard_timeout = std::chrono::seconds(timeout);
  limits.idle_timeout = std::chrono::seconds(p->idle_timeout_s);
  limits.idle_kill = p->idle_timeout_s > 0 ? std::chrono::seconds(p->idle_timeout_s * 3)
                                           : std::chrono::milliseconds(0);
  limits.kill_grace = std::chrono::milliseconds(core_.config.kill_grace_ms);
  limits.eof_grace = std::chrono::milliseconds(core_.config.eof_grace_ms);

  exec::WorkerRun::Callbacks cb;
  cb.on_stdout = [this, dispatch_id](std::string_view chunk) { OnStdout(dispatch_id, chunk); };
  cb.on_output = [this, dispatch_id] {
    if (core_.transcripts) core_.transcripts->OnAppended(dispatch_id);  // live followers
    auto it = runs_.find(dispatch_id);
    if (it == runs_.end()) return;
    int64_t now = NowMs();
    int64_t interval = core_.config.heartbeat_interval_s * 1000LL;
    if (now - it->second.last_heartbeat_ms < interval) return;
    it->second.last_heartbeat_ms = now;
    Status hs = core_.batcher.Write([&]() -> Status {
      auto cur = core_.dispatches.Get(dispatch_id);
      if (!cur || cur->state != "running") return Status::Ok();
      cur->last_output_ms = now;
      core_.dispatches.Update(*cur);
      nlohmann::json payload = {{"dispatch_id", dispatch_id}, {"last_output_unix_ms", now}};
      EmitToCoordinator(cur->coordinator, "heartbeat", "normal", cur->task_id, dispatch_id,
                        "dispatch " + std::to_string(dispatch_id) + " is making progress", "",
                        payload.dump());
      return Status::Ok();
    });
    (void)hs;
  };
  cb.on_idle = [this, dispatch_id](std::chrono::milliseconds silent) {
    Status is = core_.batcher.Write([&]() -> Status {
      auto cur = core_.dispatches.Get(dispatch_id);
      if (!cur || cur->state != "running") return Status::Ok();
      nlohmann::json payload = {{"dispatch_id", dispatch_id},
                                {"reason", "heartbeat_lost"},
                                {"silent_ms", silent.count()}};
      EmitToCoordinator(cur->coordinator, "escalation", "high", cur->task_id, dispatch_id,
                        "dispatch " + std::to_string(dispatch_id) + " silent for " +
                            std::to_string(silent.count() / 1000) + " s",
                        "no output past the no-output timeout; the process is still alive",
                        payload.dump());
      return Status::Ok();
    });
    (void)is;
  };
  cb.on_finished = [this, dispatch_id](const exec::RunOutcome& o) {
    // Leave the run's own callback stack before touching state that owns it.
    boost::asio::post(core_.io, [this, dispatch_id, o] { OnRunFinished(dispatch_id, o); });
  };
  auto run = std::make_shared<exec::WorkerRun>(core_.io, child.value(), p->brief == "stdin" ? brief : "",
                                               dir + "/transcript.log", dir + "/stdout.log",
                                               secrets, limits, std::move(cb));
  runs_[dispatch_id] = ActiveRun{run, NowMs(), 0, ""};
  run->Start();
}

void TaskService::OnStdout(int64_t dispatch_id, std::string_view chunk) {
  auto it = runs_.find(dispatch_id);
  if (it == runs_.end()) return;
  auto d_budget = [&]() -> double {
    auto d = core_.dispatches.Get(dispatch_id);
    return d ? d->budget_usd : 0;
  };
  // Cost probe: a line that is a JSON object with total_cost_usd (claude stream-json) or a
  // plain "conclave-cost-usd: X" line. A run that passes its per-dispatch cap is stopped.
  ActiveRun& a = it->second;
  a.stdout_line.append(chunk);
  if (a.stdout_line.size() > (1 << 20)) a.stdout_line.erase(0, a.stdout_line.size() - (1 << 20));
  size_t nl;
  while ((nl = a.stdout_line.find('\n')) != std::string::npos) {
    std::string line = a.stdout_line.substr(0, nl);
    a.stdout_line.erase(0, nl + 1);
    double cost = -1;
    if (line.rfind("conclave-cost-usd:", 0) == 0) {
      try { cost = std::stod(line.substr(18)); } catch (...) {}
    } else if (!line.empty() && line[0] == '{' && line.find("cost_usd") != std::string::npos) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object()) {
        for (const char* k : {"total_cost_usd", "cost_usd"}) {
          if (j.contains(k) && j[k].is_number()) cost = j[k].get<double>();
        }
      }
    }
    if (cost < 0) continue;
    a.running_cost = cost;
    double cap = d_budget();
    if (cap > 0 && cost > cap) {
      a.run->Stop("budget: per-dispatch cap of $" + std::to_string(cap) + " passed ($" +
                  std::to_string(cost) + ")");
      return;
    }
  }
}

Status TaskService::ValidateWorkerReport(domain::MessageRecord& m, const std::string& token) {
  auto d = m.dispatch_id ? core_.dispatches.Get(m.dispatch_id) : std::nullopt;
  auto refuse = [&](const std::string& why) {
    int64_t did = m.dispatch_id;
    std::string from = m.from;
    // Record the refusal in its own write (this one is about to roll back).
    boost::asio::post(core_.io, [this, did, from, why] {
      Status s = core_.batcher.Write([&]() -> Status {
        auto cur = did ? core_.dispatches.Get(did) : std::nullopt;
        EmitToCoordinator(cur ? cur->coordinator : "coordinator", "escalation", "normal",
                          cur ? cur->task_id : 0, did, "refused worker report from " + from, why,
                          "");
        return Status::Ok();
      });
      (void)s;
    });
    spdlog::warn("refused worker report for dispatch {}: {}", did, why);
    return PermissionDenied("dispatch_token: " + why);
  };
  if (!d) return refuse("dispatch " + std::to_string(m.dispatch_id) + " does not exist");
  // Constant-time comparison of the token.
  bool match = token.size() == d->token.size() && !token.empty();
  unsigned char diff = 0;
  for (size_t i = 0; match && i < token.size(); ++i) diff |= token[i] ^ d->token[i];
  if (!match || diff != 0) return refuse("wrong token for dispatch " + std::to_string(d->id));
  if (d->state != "running") {
    return refuse("dispatch " + std::to_string(d->id) + " is " + d->state + " (stale token)");
  }
  if (m.type == "worker_done") {
    if (d->worker_done) {
      return refuse("dispatch " + std::to_string(d->id) + " already reported worker_done");
    }
    d->worker_done = true;
    core_.dispatches.Update(*d);
  }
  m.task_id = d->task_id;
  if (m.from.empty() || m.from == "coordinator") m.from = d->terminal;
  if (m.to.empty()) m.to = d->coordinator;
  return Status::Ok();
}

std::vector<Core::Liveness> TaskService::Liveness(const std::vector<int64_t>& task_ids) {
  std::vector<Core::Liveness> out;
  for (int64_t id : task_ids) {
    Core::Liveness l;
    l.task_id = id;
    auto ds = core_.dispatches.ForTask(id);
    if (!ds.empty()) {
      const auto& d = ds.back();
      l.dispatch_id = d.id;
      l.state = d.state;
      auto it = runs_.find(d.id);
      if (it != runs_.end()) {
        l.process_alive = !it->second.run->finished();
        l.last_output_age_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - it->second.run->last_output())
                                   .count();
      }
    }
    out.push_back(l);
  }
  return out;
}

}  // namespace conclave::service
