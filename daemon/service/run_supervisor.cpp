#include "service/run_supervisor.h"
#include "common/loop_kick.h"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <utility>

#include "exec/confined_runner.h"
#include "exec/partial_work.h"

namespace conclave::service {
using domain::DispatchState;
using domain::StopReason;

void RunSupervisor::SnapshotDirty(int64_t dispatch_id, const std::string& cwd,
                                  std::optional<exec::SandboxPaths> sandbox) {
  // Off the loop: git status and hashing. A file the worker changed before this read has an
  // mtime after the start and is judged without it (exec::ClaimBasis). The worker already
  // runs: a sandboxed one's repository is read by git in the same (read-only) sandbox.
  auto& commands = core_.commands;
  auto& io = core_.io;
  runs_[dispatch_id].dirty_pending = true;
  boost::asio::post(core_.helpers, [this, &commands, &io, dispatch_id, cwd, sandbox] {
    auto dirty = std::make_shared<const exec::DirtyFiles>(
        exec::WithHelperRunner(commands, sandbox, [&](exec::CommandRunner& runner) {
          return exec::SnapshotDirty(runner, cwd);
        }));
    PostToLoop(io, [this, dispatch_id, dirty] {
      auto it = runs_.find(dispatch_id);
      if (it == runs_.end()) return;
      it->second.dirty_at_start = dirty;
      it->second.dirty_pending = false;
      if (auto o = std::exchange(it->second.finished, std::nullopt)) OnFinished(dispatch_id, *o);
    });
  });
}

void RunSupervisor::RecordPid(int64_t dispatch_id) {
  auto it = runs_.find(dispatch_id);
  if (it == runs_.end() || !it->second.launch) return;
  LaunchRecord launch = *it->second.launch;
  Status s = core_.batcher.Write([&]() -> Status {
    auto cur = core_.dispatches.Get(dispatch_id);
    if (!cur || cur->state != DispatchState::kRunning) return Status::Ok();
    ApplyLaunchRecord(*cur, launch);
    core_.dispatches.Update(*cur);
    return Status::Ok();
  });
  if (!s.ok()) {
    spdlog::error("dispatch {}: recording pid failed: {}", dispatch_id, s.message());
    return;  // it goes with the outcome instead; the journal keeps it meanwhile
  }
  core_.batcher.AfterCommit([this, dispatch_id](bool ok) {
    if (!ok) return;
    auto r = runs_.find(dispatch_id);
    if (r != runs_.end()) r->second.launch.reset();
    MaybeClearJournal();
  });
}

void RunSupervisor::MaybeClearJournal() {
  for (const auto& [id, a] : runs_) {
    if (a.launch && !a.run->finished()) return;  // its only record is the journal's
  }
  journal_.Compact();  // only once it is full
}

exec::RunCallbacks RunSupervisor::CallbacksFor(int64_t dispatch_id) {
  exec::RunCallbacks cb;
  cb.on_stdout = [this, dispatch_id](std::string_view chunk) { OnStdout(dispatch_id, chunk); };
  cb.on_output = [this, dispatch_id] { OnOutput(dispatch_id); };
  cb.on_idle = [this, dispatch_id](std::chrono::milliseconds silent) { OnIdle(dispatch_id, silent); };
  cb.on_finished = [this, dispatch_id](const exec::RunOutcome& o) {
    // Leave the run's own callback stack before touching state that owns it.
    PostToLoop(core_.io, [this, dispatch_id, o] { OnFinished(dispatch_id, o); });
  };
  return cb;
}

void RunSupervisor::OnStdout(int64_t dispatch_id, std::string_view chunk) {
  auto it = runs_.find(dispatch_id);
  if (it == runs_.end()) return;
  auto cost = it->second.cost.Feed(chunk);
  if (!cost) return;
  auto d = core_.dispatches.Get(dispatch_id);
  double cap = d ? d->budget_usd : 0;
  if (cap > 0 && *cost > cap) {
    it->second.run->Stop(StopReason::kBudget, "budget: per-dispatch cap of $" +
                                                  std::to_string(cap) + " passed ($" +
                                                  std::to_string(*cost) + ")");
  }
}

void RunSupervisor::OnOutput(int64_t dispatch_id) {
  if (transcripts_) transcripts_->OnAppended(dispatch_id);
  Heartbeat(dispatch_id, "output", 0, 0);
}

void RunSupervisor::OnActivity(const ActivityWatch::Report& r) {
  auto it = runs_.find(r.dispatch_id);
  if (it == runs_.end() || it->second.run->finished()) return;
  it->second.run->NoteActivity();  // working (or unknown, never idle): silence restarts
  if (r.signal == ActivityWatch::Signal::kUnknown) {
    if (!std::exchange(it->second.activity_unknown_logged, true)) {
      spdlog::warn("dispatch {}: the CPU/IO of its processes cannot be read from /proc; it is "
                   "not treated as idle while silent (the hard timeout still applies)",
                   r.dispatch_id);
    }
    return;
  }
  Heartbeat(r.dispatch_id, "activity", r.cpu_ms, r.io_bytes);
}

void RunSupervisor::Heartbeat(int64_t dispatch_id, const std::string& signal, int64_t cpu_ms,
                              int64_t io_bytes) {
  auto it = runs_.find(dispatch_id);
  if (it == runs_.end()) return;
  int64_t now = core_.clock.NowMs();
  if (now - it->second.last_heartbeat_ms < core_.config.heartbeat_interval_s * 1000LL) return;
  it->second.last_heartbeat_ms = now;
  const bool output = signal == "output";
  Status s = core_.batcher.Write([&]() -> Status {
    auto cur = core_.dispatches.Get(dispatch_id);
    if (!cur || cur->state != DispatchState::kRunning) return Status::Ok();
    nlohmann::json payload = {{"dispatch_id", dispatch_id}, {"signal", signal}};
    if (output) {
      cur->last_output_ms = now;
      core_.dispatches.Update(*cur);
      payload["last_output_unix_ms"] = now;
    } else {
      payload["cpu_ms"] = cpu_ms;
      payload["io_bytes"] = io_bytes;
      if (cur->last_output_ms > 0) payload["last_output_unix_ms"] = cur->last_output_ms;
    }
    std::string subject = "dispatch " + std::to_string(dispatch_id) +
                          (output ? " is making progress"
                                  : " is working without output (CPU/IO activity)");
    core_.Notify({cur->coordinator, "heartbeat", "normal", cur->task_id, dispatch_id, subject, "",
                  payload.dump()});
    return Status::Ok();
  });
  (void)s;  // a heartbeat that cannot be written is dropped; the next one follows
}

void RunSupervisor::OnIdle(int64_t dispatch_id, std::chrono::milliseconds silent) {
  Status s = core_.batcher.Write([&]() -> Status {
    auto cur = core_.dispatches.Get(dispatch_id);
    if (!cur || cur->state != DispatchState::kRunning) return Status::Ok();
    nlohmann::json payload = {{"dispatch_id", dispatch_id},
                              {"reason", "heartbeat_lost"},
                              {"silent_ms", silent.count()}};
    core_.Notify({cur->coordinator, "escalation", "high", cur->task_id, dispatch_id,
                  "dispatch " + std::to_string(dispatch_id) + " silent for " +
                      std::to_string(silent.count() / 1000) + " s",
                  "no output and no CPU/IO activity past the idle timeout; the process is "
                  "still alive",
                  payload.dump()});
    return Status::Ok();
  });
  (void)s;
}

void RunSupervisor::OnFinished(int64_t dispatch_id, const exec::RunOutcome& outcome) {
  activity_.Forget(dispatch_id);
  if (core_.dispatch_sockets) core_.dispatch_sockets->Close(dispatch_id);
  auto it = runs_.find(dispatch_id);
  if (it != runs_.end() && it->second.dirty_pending && !all_stopped_) {
    it->second.finished = outcome;  // judged once the starting point is known
    return;
  }
  double probed = it == runs_.end() ? 0 : it->second.cost.latest();
  // A pid not yet in the store goes with the outcome (the run is over: the journal's entry
  // has nothing left to find).
  std::optional<LaunchRecord> launch;
  std::shared_ptr<const exec::DirtyFiles> dirty;
  if (it != runs_.end()) {
    it->second.record_pid.reset();
    launch = std::exchange(it->second.launch, std::nullopt);
    dirty = it->second.dirty_at_start;
  }
  MaybeClearJournal();
  completion_.OnRunFinished(dispatch_id, outcome, probed, [this, dispatch_id] {
    runs_.erase(dispatch_id);
    MaybeAllStopped();
  }, launch, dirty);
}

void RunSupervisor::StopRun(int64_t dispatch_id, StopReason reason, const std::string& detail) {
  auto it = runs_.find(dispatch_id);
  if (it != runs_.end()) it->second.run->Stop(reason, detail);
  // Being spawned: stopped once the spawn is back (the first reason stands, as for a run).
  // A spawn not begun yet is not made at all (a stuck one ahead of it cannot hold it up).
  auto l = launching_.find(dispatch_id);
  if (l != launching_.end() && !l->second.stop) {
    l->second.stop.emplace(reason, detail);
    l->second.abandoned->store(true);
  }
  // Cancelled or force-closed while its partial work was being read: it never starts.
  if (resuming_.erase(dispatch_id) > 0) NotLaunched(dispatch_id, reason, detail);
}

std::vector<Liveness> RunSupervisor::LivenessOf(const std::vector<int64_t>& task_ids) {
  std::vector<Liveness> out;
  auto now = std::chrono::steady_clock::now();
  for (int64_t id : task_ids) {
    Liveness l;
    l.task_id = id;
    auto ds = core_.dispatches.ForTask(id);
    if (!ds.empty()) {
      const auto& d = ds.back();
      l.dispatch_id = d.id;
      l.state = std::string(domain::DispatchStateName(d.state));
      auto it = runs_.find(d.id);
      auto spawning = launching_.find(d.id);
      if (spawning != launching_.end()) {
        l.pid = spawning->second.pid->load();  // 0 until the child exists
        l.process_alive = l.pid > 0;
      } else if (it != runs_.end()) {
        l.process_alive = !it->second.run->finished();
        l.pid = it->second.run->pid();
        l.last_output_age_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   now - it->second.run->last_output())
                                   .count();
      }
    }
    out.push_back(l);
  }
  return out;
}

std::optional<domain::Dispatch> RunSupervisor::DispatchOf(
    const std::vector<exec::ProcessLink>& chain) {
  for (const auto& link : chain) {
    for (const auto& [id, a] : runs_) {
      if (a.run->pid() == link.pid && a.run->start_time() == link.start_time && !a.run->finished()) {
        auto d = core_.dispatches.Get(id);
        if (d && d->state == DispatchState::kRunning) return d;
      }
    }
    // A worker quicker than its spawn's return to the loop: known by the pid the kernel wrote
    // before the child ran (the child is not reaped before its run ends, so the number is
    // its own).
    for (const auto& [id, l] : launching_) {
      if (link.pid > 0 && l.pid->load() == link.pid) {
        auto d = core_.dispatches.Get(id);
        if (d && d->state == DispatchState::kRunning) return d;
      }
    }
  }
  return std::nullopt;
}

void RunSupervisor::StopAll(std::function<void()> done) {
  all_stopped_ = std::move(done);
  stopping_ = true;
  core_.launcher.Close();  // queued spawns are not made; those under way come back to be stopped
  // Dispatches this loop turn started launch after their COMMIT: commit now, so they are
  // recorded as stopped by the shutdown (Launch refuses) and waited for, not spawned after it.
  core_.batcher.Flush();
  // Runs that ended while their starting point was being read are recorded now, judged
  // without it: a shutdown does not wait for git (the outcome must not be lost).
  std::vector<std::pair<int64_t, exec::RunOutcome>> waiting;
  for (auto& [id, a] : runs_) {
    if (auto o = std::exchange(a.finished, std::nullopt)) waiting.emplace_back(id, *o);
  }
  for (const auto& [id, o] : waiting) OnFinished(id, o);
  for (auto& [id, a] : runs_) a.run->Stop(StopReason::kShutdown, "shutdown");
  for (int64_t id : std::exchange(resuming_, {})) {
    NotLaunched(id, StopReason::kShutdown, "shutdown before the worker started");
  }
  stop_deadline_ = core_.clock.After(core_.config.kill_grace_ms + 2000, [this] {
    // A spawn still not back is stuck in the kernel: its child is killed, and the launcher's
    // thread, which shutdown joins, replaced (a stuck one is left detached), or it would hold
    // the daemon's exit as long as the kernel holds it.
    std::vector<int64_t> given_up;
    for (const auto& [id, l] : launching_) {
      core_.launcher.AbortSpawn(*l.pid);
      if (core_.launcher.ReplaceStuckThread(*l.progress)) {
        l.abandoned->store(true);
        given_up.push_back(id);
      }
    }
    // Recorded if the loop still gets to it; else recovery finds them running at the next start.
    for (int64_t id : given_up) {
      launching_.erase(id);
      NotLaunched(id, StopReason::kShutdown, "shutdown: its spawn was stuck and given up");
    }
    if (all_stopped_) std::exchange(all_stopped_, nullptr)();
  });
  MaybeAllStopped();
}

void RunSupervisor::MaybeAllStopped() {
  if (!all_stopped_ || !runs_.empty() || !launching_.empty() || unlaunched_ > 0) return;
  stop_deadline_.reset();
  std::exchange(all_stopped_, nullptr)();
}

}  // namespace conclave::service
