// FakeLauncher: a Launcher that starts nothing. Each launch is recorded with its plan and
// callbacks; the test ends a run with Finish(), which writes the given stdout where the daemon
// reads it (the plan's stdout.log) and reports the outcome — as the real WorkerRun would, once
// the process is reaped and its pipes are at EOF.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/launcher.h"

namespace conclave::testing {

class FakeRun final : public exec::RunHandle {
 public:
  explicit FakeRun(int pid) : pid_(pid) {}
  pid_t pid() const override { return pid_; }
  int64_t start_time() const override { return 1; }
  void Stop(domain::StopReason reason, const std::string& detail) override {
    if (stop == domain::StopReason::kNone) {
      stop = reason;
      stop_detail = detail;
    }
  }
  bool finished() const override { return finished_; }
  std::chrono::steady_clock::time_point last_output() const override { return {}; }
  void NoteActivity() override { ++activity_noted; }

  domain::StopReason stop = domain::StopReason::kNone;
  std::string stop_detail;
  bool finished_ = false;
  int activity_noted = 0;  // NoteActivity calls: the supervisor saw the run working

 private:
  int pid_;
};

class FakeLauncher final : public exec::Launcher {
 public:
  struct Started {
    exec::LaunchPlan plan;
    exec::RunLimits limits;
    exec::RunCallbacks cb;
    std::shared_ptr<FakeRun> run;
  };

  // Prepared (exec::PrepareSpawn, as the real launcher does on its thread) and launched at
  // once, unless hold_spawns: then the run's process exists (its pid is in the plan's
  // early_pid slot, as the kernel puts it there) but the supervisor learns of it only when the
  // test calls ReleaseSpawns() — the real launcher's spawn on its own thread. With
  // hold_before_child, a held launch has no child yet: the thread is still preparing it (its
  // slot 0, progress->on_thread set), as when a filesystem call hangs.
  void Start(exec::LaunchPlan plan, exec::RunLimits limits, exec::RunCallbacks cb,
             Launched launched) override {
    if (!fail_next.empty()) return launched(FailedPrecondition(std::exchange(fail_next, "")));
    if (Status s = exec::PrepareSpawn(plan); !s.ok()) return launched(s);
    auto run = std::make_shared<FakeRun>(next_pid_++);
    const bool child = !(hold_spawns && hold_before_child);
    if (plan.spec.early_pid && child) plan.spec.early_pid->store(run->pid());
    auto progress = plan.progress;
    progress->on_thread.store(hold_spawns && held_.empty());  // the thread is on the oldest
    launches.push_back({std::move(plan), limits, std::move(cb), run});
    if (!hold_spawns) return launched(std::shared_ptr<exec::RunHandle>(run));
    held_.push_back([run, progress, launched = std::move(launched)](const std::string& fail) {
      progress->on_thread.store(false);
      if (progress->given_up.load()) return;  // given up: never reported, as the real one
      if (!fail.empty()) return launched(FailedPrecondition(fail));
      launched(std::shared_ptr<exec::RunHandle>(run));
    });
  }
  bool AbortSpawn(const std::atomic<pid_t>& slot) override {
    aborted.push_back(slot.load());
    return true;
  }
  // As the real launcher: only the launch the thread is on, and only while it is.
  bool ReplaceStuckThread(exec::LaunchProgress& progress) override {
    if (!progress.on_thread.load()) return false;
    progress.given_up.store(true);
    ++replaced;
    ++stuck;
    return true;
  }
  int replaced_threads() const override { return replaced; }
  int stuck_threads() const override { return stuck; }
  // Hands every held spawn back, in order; with `fail`, as spawns that failed.
  void ReleaseSpawns(const std::string& fail = "") {
    auto held = std::exchange(held_, {});
    for (auto& h : held) h(fail);
  }

  // Runs not finished yet, oldest first.
  std::vector<Started*> Running() {
    std::vector<Started*> out;
    for (auto& l : launches) {
      if (!l.run->finished_) out.push_back(&l);
    }
    return out;
  }

  // Ends a run: its stdout (as the worker printed it) and exit code; a stop requested with
  // Stop() is reported as such.
  void Finish(Started* l, const std::string& stdout_text, int exit_code = 0,
              const std::string& stderr_text = "") {
    if (!stdout_text.empty()) {  // like WorkerRun: the files come with the first output
      std::filesystem::create_directories(std::filesystem::path(l->plan.stdout_path).parent_path());
      std::ofstream(l->plan.stdout_path) << stdout_text;
    }
    exec::RunOutcome o;
    o.exit_code = exit_code;
    o.stop = l->run->stop;
    o.stop_detail = l->run->stop_detail;
    o.stdout_bytes = static_cast<int64_t>(stdout_text.size());
    o.stderr_tail = stderr_text;
    l->run->finished_ = true;
    if (l->cb.on_finished) l->cb.on_finished(o);
  }

  std::vector<Started> launches;
  std::vector<pid_t> aborted;  // AbortSpawn's children, in order
  std::string fail_next;  // the next Start fails with this message
  bool hold_spawns = false;
  bool hold_before_child = false;
  int replaced = 0;  // ReplaceStuckThread calls that gave a launch up
  int stuck = 0;     // of them, threads the test has not let come back (it may set it)

 private:
  int next_pid_ = 100000;
  std::vector<std::function<void(const std::string&)>> held_;
};

}  // namespace conclave::testing
