// Services: the composition of every service part over one Core, wired once (the parts reach
// each other through the small interfaces in ports.h), plus the read-only views the API maps
// (daemon status, profiles). The api layer holds a reference and posts each RPC onto the loop
// that owns it. Loop thread only.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "common/poll_counts.h"
#include "service/budget_guard.h"
#include "service/callers.h"
#include "service/core.h"
#include "service/dispatch_scheduler.h"
#include "service/doctor.h"
#include "service/flow_service.h"
#include "service/gate_service.h"
#include "service/messaging_service.h"
#include "service/recovery.h"
#include "service/retention.h"
#include "service/review_round_launcher.h"
#include "service/review_rounds.h"
#include "service/review_service.h"
#include "service/review_verdicts.h"
#include "service/review_workspace.h"
#include "service/run_completion.h"
#include "service/run_supervisor.h"
#include "service/status_reads.h"
#include "service/task_service.h"
#include "service/terminal_service.h"
#include "service/transcript_follower.h"
#include "service/worker_reports.h"
#include "store/flow_store.h"
#include "store/review_store.h"

namespace conclave::service {

struct CooldownView {
  std::string profile;
  int64_t until_ms = 0;
  std::string reason;
};

struct ProfileView {
  std::string name, family, type, brief, parser, source_file, template_name;
  std::vector<std::string> command;
  int timeout_s = 0, idle_timeout_s = 0, max_concurrent = 0, running = 0;
  bool isolate_home = false;
  int64_t cooldown_until_ms = 0;
};

struct ProfileErrorView {
  std::string file, field, error;
};

struct StatusView {
  std::string version, state_dir, database_path, listener, profiles_dir, store_mode, allocator,
      sqlite;
  int64_t uptime_ms = 0, pid = 0, last_seq = 0;
  int schema_version = 0;
  std::map<std::string, int64_t> counts;
  std::vector<CooldownView> cooldowns;
  std::vector<BudgetGuard::Line> spend;
  DiskView disk;
};

struct Services {
  explicit Services(Core& c);

  Core& core;
  store::ReviewStore review_store;
  store::FlowStore flow_store;
  MessagingService messaging;
  TranscriptFollower transcripts;
  TerminalService terminals;
  TaskService tasks;
  BudgetGuard budgets;
  StatusReads status_reads;
  DispatchScheduler scheduler;
  GateService gates;
  RunCompletion completion;
  RunSupervisor runs;
  WorkerReports reports;
  Recovery recovery;
  Callers callers;
  ReviewWorkspace review_workspace;
  ReviewVerdicts review_verdicts;
  RoundLauncher round_launcher;
  ReviewRounds review_rounds;
  ReviewService reviews;
  FlowService flows;
  Doctor doctor;
  Retention retention;
  // The loop's polls of gRPC's queue (api/queue_loop.h), set before serving when the loop
  // serves the queue (they stay 0 while loop_poll_us is 0); counted 0 without it.
  const PollCounts* loop_polls = nullptr;

  // Startup, before serving: built-in handles, crash recovery, reviews that advanced offline.
  void Start();
  // Shutdown: refuse new work, answer pending waits, stop every worker; done when recorded.
  void Stop(std::function<void()> done);

  StatusView Status();
  // The same, from a snapshot StatusReads::Get() just returned (Get() is not called again).
  StatusView Status(const StatusReads::Snapshot& stored);
  int64_t UptimeMs() const { return core.clock.NowMs() - core.started_ms; }
  // The counts of Status() read from memory rather than the store: they may change without a
  // write (a Wait parks, a commit is counted), so a reply kept between calls refreshes these.
  static constexpr size_t kLiveCounts = 13;
  std::array<std::pair<const char*, int64_t>, kLiveCounts> LiveCounts();
  std::vector<ProfileView> Profiles();
  std::vector<ProfileErrorView> ProfileErrors();
  // The last committed sequence number (a safe cursor).
  int64_t LastSeq() const { return core.bus.last_seq(); }

 private:
  std::map<std::string, int64_t> Counts(const StatusReads::Snapshot& stored);
};

}  // namespace conclave::service
