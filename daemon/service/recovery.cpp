#include "service/recovery.h"

#include <signal.h>

#include <boost/asio/post.hpp>
#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <set>
#include <thread>

#include "domain/crash_loop.h"
#include "exec/capped_log.h"
#include "common/hash.h"
#include "exec/proc_info.h"
#include "exec/run_tree.h"
#include "exec/spawn_journal.h"

namespace conclave::service {
using domain::DispatchState;
using domain::TerminalState;

void Recovery::StopSurvivors(const std::vector<domain::Dispatch>& running) {
  // The groups of the workers still running, only when /proc still shows the very process we
  // started (same start time).
  std::vector<std::pair<pid_t, int64_t>> groups;  // leader, its start time
  std::vector<exec::ProcStat> members;  // of those groups as the stop began
  for (const auto& d : running) {
    if (d.pid > 1 && exec::SignalGroupOfLeader(d.pid, d.proc_start, SIGTERM)) {
      spdlog::info("recovery: stopping surviving worker group {} of dispatch {}", d.pid, d.id);
      groups.push_back({d.pid, d.proc_start});
      for (auto& m : exec::ProcessesInGroup(d.pid)) members.push_back(m);
    }
  }
  // Everything else an earlier run of this daemon started, whatever became of its dispatch
  // (a worker whose pid reached neither the journal nor the store, a setsid escapee, one
  // whose finished dispatch's sweep the crash cut short), with its descendants.
  std::vector<exec::ProcStat> procs = FindLeftovers();
  for (const auto& p : procs) {
    spdlog::info("recovery: stopping leftover worker process {} (group {})", p.pid, p.pgid);
  }
  exec::SignalProcesses(procs, SIGTERM);
  // Startup, before serving: waiting here holds up nothing but the start.
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(core_.config.kill_grace_ms);
  // The groups' members are among procs too (descendants of their leaders, which started with
  // that environment); a group with a zombie its parent never reaps (a container whose init
  // does not reap) would hold the start up for the whole grace.
  while (!procs.empty() && std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (const auto& p : procs) any |= exec::StillRunning(p.pid, p.start_time);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Through the leader while it is still the one started; its group's members also one by
  // one (by start time): a leader reaped during the grace (by init) may have freed its pid.
  for (const auto& [leader, start] : groups) exec::SignalGroupOfLeader(leader, start, SIGKILL);
  exec::SignalProcesses(members, SIGKILL);
  exec::SignalProcesses(procs, SIGKILL);  // start times checked: never a recycled pid
  // What they forked during the grace.
  exec::SignalProcesses(FindLeftovers(), SIGKILL);
}

std::vector<exec::ProcStat> Recovery::FindLeftovers() {
  // This daemon has no worker yet: a process that started with this socket and a dispatch's
  // id and token is a leftover of an earlier run when the token is that dispatch's in this
  // store. Another daemon's workers (the socket path does not depend on the state directory)
  // and a user's shell with CONCLAVE_SOCKET set are not.
  std::vector<exec::ProcStat> out;
  std::set<pid_t> seen;
  for (const auto& p : exec::FindProcessesWithEnv({"CONCLAVE_SOCKET=" + core_.SocketPath()},
                                                  {"CONCLAVE_DISPATCH_ID",
                                                   "CONCLAVE_DISPATCH_TOKEN"})) {
    auto env = exec::ReadEnvValues(p.pid, {"CONCLAVE_DISPATCH_ID", "CONCLAVE_DISPATCH_TOKEN"});
    int64_t id = 0;
    const std::string& id_text = env["CONCLAVE_DISPATCH_ID"];
    auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size()) continue;
    auto d = core_.dispatches.Get(id);
    if (!d || d->token.empty() || d->token != Sha256Hex(env["CONCLAVE_DISPATCH_TOKEN"])) continue;
    exec::RunMarks marks;  // it and its descendants
    marks.leader = p.pid;
    marks.leader_start = p.start_time;
    for (const auto& q : exec::FindRunProcesses(marks)) {
      if (seen.insert(q.pid).second) out.push_back(q);
    }
  }
  return out;
}

void Recovery::Requeue(domain::Dispatch d) {
  const int64_t now = core_.clock.NowMs();
  const bool loop = domain::IsCrashLoop(core_.dispatches.ForTask(d.task_id), d, now,
                                        int64_t{core_.config.crash_loop_window_s} * 1000);
  if (loop) return FailCrashLoop(std::move(d));
  if (!domain::MoveDispatch(d, DispatchState::kInterrupted).ok()) return;
  d.failure_kind = domain::FailureKindName(domain::FailureKind::kInterrupted);
  d.failure_class = "operational";
  d.evidence = std::string(domain::kDaemonDiedEvidence);
  d.finished_ms = now;
  core_.dispatches.Update(d);
  FreeTerminal(d);
  auto t = core_.tasks.Get(d.task_id);
  if (!t || t->Finished()) return;
  int64_t next = scheduler_.Requeue(d, d.target, 0, false);
  nlohmann::json payload = {{"interrupted_dispatch", d.id}, {"requeued_dispatch", next}};
  core_.Notify({d.coordinator, "status", "high", d.task_id, d.id,
                "dispatch " + std::to_string(d.id) + " interrupted by a daemon restart",
                "re-queued as dispatch " + std::to_string(next), payload.dump()});
}

void Recovery::FailCrashLoop(domain::Dispatch d) {
  if (!domain::MoveDispatch(d, DispatchState::kFailed).ok()) return;
  d.failure_kind = domain::FailureKindName(domain::FailureKind::kCrashLoop);
  d.failure_class = "operational";
  d.evidence = "conclaved died uncleanly " + std::to_string(domain::kCrashLoopLimit) +
               " times, each within " + std::to_string(core_.config.crash_loop_window_s) +
               " s of this task's dispatch starting; not re-queued";
  d.finished_ms = core_.clock.NowMs();
  core_.dispatches.Update(d);
  FreeTerminal(d);
  std::string status;
  if (auto t = core_.tasks.Get(d.task_id); t && !t->Finished()) {
    if (tasks_.SetStatus(*t, domain::TaskState::kFailed, "crash_loop").ok()) {
      status = std::string(domain::TaskStateName(t->status));
    }
  }
  std::string id = std::to_string(d.id);
  nlohmann::json payload = {{"outcome", "failed"}, {"state", "failed"},
                            {"failure_kind", d.failure_kind}, {"failure_class", "operational"},
                            {"evidence", d.evidence}, {"task_status", status},
                            {"will_retry", false}};
  core_.Notify({d.coordinator, "worker_done", "high", d.task_id, d.id,
                "task " + std::to_string(d.task_id) + " dispatch " + id + " failed (crash_loop)",
                d.evidence, payload.dump()});
  core_.Notify({d.coordinator, "escalation", "urgent", d.task_id, d.id,
                "dispatch " + id + ": conclaved keeps dying while it runs",
                d.evidence + ". Look at the daemon's log (journalctl --user -u conclaved) for "
                "the crash, then dispatch the task again.",
                ""});
}

void Recovery::FreeTerminal(const domain::Dispatch& d) {
  if (auto term = core_.terminals.Get(d.terminal)) {
    if (term->state == TerminalState::kDraining) {
      (void)terminals_.Move(*term, TerminalState::kClosed);
    } else if (term->state == TerminalState::kBusy) {
      (void)terminals_.Move(*term, TerminalState::kIdle);
    }
  }
}

void Recovery::ReconcileTerminals() {
  for (auto term : core_.terminals.List(false)) {
    bool loaded = core_.profiles.Find(term.profile) != nullptr;
    if (!loaded && term.state == TerminalState::kIdle) {
      (void)terminals_.Move(term, TerminalState::kOffline);
    } else if (loaded && term.state == TerminalState::kOffline) {
      (void)terminals_.Move(term, TerminalState::kIdle);
    } else if (term.state == TerminalState::kBusy) {
      // Left busy without a running dispatch (a crash between writes).
      auto d = term.active_dispatch ? core_.dispatches.Get(term.active_dispatch) : std::nullopt;
      if (!d || d->state != DispatchState::kRunning) (void)terminals_.Move(term, TerminalState::kIdle);
    }
  }
}

void Recovery::Run() {
  auto running = core_.dispatches.InState(DispatchState::kRunning);
  // A run whose pid had not reached the store yet is in the spawn journal.
  auto journal = exec::ReadSpawnJournal(exec::SpawnJournalPath(core_.config.state_dir));
  for (auto& d : running) {
    auto it = journal.find(d.id);
    if (d.pid == 0 && it != journal.end()) {
      d.pid = it->second.pid;
      d.proc_start = it->second.start_time;
      if (d.start_head.empty()) d.start_head = it->second.start_head;
    }
  }
  StopSurvivors(running);
  // The capped logs of runs the crash cut short: their kept tail goes back behind the head,
  // as a finished run's does (off the loop; the cap is the one configured now).
  const int64_t cap = int64_t{core_.config.transcript_cap_mib} << 20;
  for (const auto& d : running) {
    boost::asio::post(core_.helpers, [dir = core_.DispatchDir(d.id), cap] {
      (void)exec::StitchCappedLog(dir + "/transcript.log", cap);
      (void)exec::StitchCappedLog(dir + "/stdout.log", cap);
    });
  }
  if (!running.empty()) {
    spdlog::info("recovery: {} interrupted dispatch(es) to re-queue", running.size());
  }
  Settle(std::move(running));
}

void Recovery::Settle(std::vector<domain::Dispatch> running) {
  auto again = [this, running] {
    // Only a full disk passes: anything else (a broken store, a failing statement) would
    // fail the same way again, and WhenWritable runs at once while writing.
    if (core_.batcher.mode() != CommitBatcher::Mode::kDiskFull) {
      spdlog::critical("recovery: not written; the interrupted dispatches stay as they are "
                       "until the next start");
      return;
    }
    spdlog::error("recovery: not written; it runs again once the disk has room");
    core_.batcher.WhenWritable([this, running] { Settle(running); });
  };
  Status s = core_.batcher.Write([&]() -> Status {
    for (const auto& d : running) {
      // A second try finds them as the first left them; anything else ended them meanwhile.
      auto now = core_.dispatches.Get(d.id);
      if (now && now->state == DispatchState::kRunning) Requeue(d);
    }
    ReconcileTerminals();
    return Status::Ok();
  });
  if (!s.ok()) {
    spdlog::error("recovery failed: {}", s.message());
    return again();
  }
  core_.batcher.AfterCommit([this, again](bool ok) {
    if (!ok) return again();
    scheduler_.Pump();
  });
}

}  // namespace conclave::service
