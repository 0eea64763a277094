// TaskService: crash recovery at startup and worker shutdown at exit.
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <thread>

#include "common/clock.h"
#include "exec/proc_info.h"
#include "service/task_service.h"

namespace conclave::service {

void TaskService::Recover() {
  auto running = core_.dispatches.InState("running");
  // 1. Stop survivors of the previous run — only when /proc still shows the very process we
  //    started (same start time), so a recycled pid is never signalled.
  std::vector<pid_t> signalled;
  for (const auto& d : running) {
    if (d.pid > 1 && exec::SameProcess(d.pid, d.proc_start)) {
      spdlog::info("recovery: stopping surviving worker group {} of dispatch {}", d.pid, d.id);
      exec::SignalGroup(d.pid, SIGTERM);
      signalled.push_back(d.pid);
    }
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(core_.config.kill_grace_ms);
  while (!signalled.empty() && std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (pid_t p : signalled) any |= exec::ProcessGroupAlive(p);
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t p : signalled) exec::SignalGroup(p, SIGKILL);

  // 2. Mark them interrupted (operational, not counted) and re-queue.
  Status s = core_.batcher.Write([&]() -> Status {
    for (auto d : running) {
      d.state = "interrupted";
      d.failure_kind = "interrupted";
      d.failure_class = "operational";
      d.evidence = "conclaved restarted while the dispatch was running";
      d.finished_ms = NowMs();
      core_.dispatches.Update(d);
      if (auto term = core_.terminals.Get(d.terminal)) {
        if (term->state == "draining") {
          core_.terminals.SetState(term->handle, "closed", 0);
          core_.handles.MarkClosed(term->handle);
        } else if (term->state == "busy") {
          core_.terminals.SetState(term->handle, "idle", 0);
        }
      }
      auto t = core_.tasks.Get(d.task_id);
      if (!t || t->status == "cancelled" || t->status == "completed") continue;
      int64_t next = Requeue(d, d.target, 0, false);
      nlohmann::json payload = {{"interrupted_dispatch", d.id}, {"requeued_dispatch", next}};
      EmitToCoordinator(d.coordinator, "status", "high", d.task_id, d.id,
                        "dispatch " + std::to_string(d.id) + " interrupted by a daemon restart",
                        "re-queued as dispatch " + std::to_string(next), payload.dump());
    }
    // A terminal whose profile is no longer loaded is offline until it comes back.
    for (const auto& term : core_.terminals.List(false)) {
      bool loaded = core_.profiles.Find(term.profile) != nullptr;
      if (!loaded && term.state == "idle") core_.terminals.SetState(term.handle, "offline", 0);
      if (loaded && term.state == "offline") core_.terminals.SetState(term.handle, "idle", 0);
    }
    // Terminals left busy without a running dispatch (crash between writes).
    for (const auto& term : core_.terminals.List(false)) {
      if (term.state != "busy") continue;
      auto d = term.active_dispatch ? core_.dispatches.Get(term.active_dispatch) : std::nullopt;
      if (!d || d->state != "running") core_.terminals.SetState(term.handle, "idle", 0);
    }
    return Status::Ok();
  });
  if (!s.ok()) spdlog::error("recovery failed: {}", s.message());
  if (!running.empty()) {
    spdlog::info("recovery: {} interrupted dispatch(es) re-queued", running.size());
  }
  core_.batcher.AfterCommit([this](bool ok) {
    if (ok) Pump();
  });
}

void TaskService::StopAll(std::function<void()> done) {
  stopping_ = true;
  wake_timer_.cancel();
  if (runs_.empty()) return done();
  for (auto& [id, a] : runs_) a.run->Stop("shutdown");
  // Completion of each run re-queues its dispatch (interrupted); poll until all are gone.
  auto timer = std::make_shared<boost::asio::steady_timer>(core_.io);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(core_.config.kill_grace_ms + 2000);
  auto check = std::make_shared<std::function<void()>>();
  *check = [this, timer, deadline, check, done]() {
    if (runs_.empty() || std::chrono::steady_clock::now() > deadline) {
      done();
      *check = nullptr;  // break the cycle
      return;
    }
    timer->expires_after(std::chrono::milliseconds(20));
    timer->async_wait([check](const boost::system::error_code&) {
      if (*check) (*check)();
    });
  };
  (*check)();
}

}  // namespace conclave::service
