#include "service/services.h"

#include <unistd.h>

#include "common/heap.h"
#include "store/sqlite_memory.h"

namespace conclave::service {

Services::Services(Core& c)
    : core(c),
      review_store(c.db),
      flow_store(c.db),
      messaging(c),
      transcripts(c),
      terminals(c),
      tasks(c),
      budgets(c),
      status_reads(c, budgets),
      scheduler(c, messaging, tasks, terminals, budgets),
      gates(c, tasks),
      completion(c, scheduler, tasks, terminals),
      runs(c, completion),
      reports(c),
      recovery(c, scheduler, terminals, tasks),
      callers(c, runs),
      review_workspace(c, review_store),
      review_verdicts(c, review_store, gates, review_workspace),
      round_launcher(c, review_store, scheduler, terminals, review_workspace),
      review_rounds(c, review_store, round_launcher, review_verdicts),
      reviews(c, review_store, review_rounds, review_verdicts, review_workspace),
      flows(c, flow_store, tasks, scheduler, reviews, review_store),
      doctor(c),
      retention(c) {
  messaging.Connect(&reports, &runs, &callers);
  terminals.Connect(&runs);
  tasks.Connect(&runs, &callers);
  scheduler.Connect(&runs);
  gates.Connect(&scheduler, &review_verdicts);
  runs.SetPlacement(&review_workspace);
  completion.AddListener(&review_rounds);
  completion.Connect(&transcripts);
  completion.Connect(&gates);
  runs.Connect(&transcripts);
  completion.AddListener(&flows);
  reviews.AlsoTell(&flows);
  retention.Connect(&flows);
  gates.ConnectFlows(&flows);
  completion.Connect(static_cast<RetryTargets*>(&flows));
  review_verdicts.Connect(&reviews);
}

void Services::Start() {
  messaging.EnsureBuiltinHandles();
  core.batcher.Flush();
  recovery.Run();
  review_rounds.Resume();
  flows.Resume();
  retention.Start();
}

void Services::Stop(std::function<void()> done) {
  scheduler.Stop();
  retention.Stop();
  flows.Stop();
  core.bus.ExpireAll();
  reviews.ExpireWaiters();
  flows.ExpireWaiters();
  runs.StopAll(std::move(done));
}

std::array<std::pair<const char*, int64_t>, Services::kLiveCounts> Services::LiveCounts() {
  // Sized by what is listed: one more or one fewer than kLiveCounts does not compile.
  return std::to_array<std::pair<const char*, int64_t>>({
      {"waiters", static_cast<int64_t>(core.bus.waiter_count())},
      {"watchers", static_cast<int64_t>(core.bus.watcher_count())},
      {"review_waiters", static_cast<int64_t>(reviews.waiter_count())},
      {"flow_waiters", static_cast<int64_t>(flows.waiter_count())},
      {"profiles", static_cast<int64_t>(core.profiles.profiles.size())},
      {"commits", core.batcher.commits()},
      {"wal_checkpoints", core.db.checkpoints()},
      {"sqlite_memory_bytes", store::SqliteMemoryUsed()},
      {"status_rereads", status_reads.rereads()},
      {"launch_threads_replaced", core.launcher.replaced_threads()},
      {"launch_threads_stuck", core.launcher.stuck_threads()},
      {"loop_polls", loop_polls ? loop_polls->polls.load() : 0},
      {"loop_polls_caught", loop_polls ? loop_polls->caught.load() : 0},
  });
}

std::map<std::string, int64_t> Services::Counts(const StatusReads::Snapshot& stored) {
  std::map<std::string, int64_t> c = stored.counts;
  for (const auto& [name, n] : LiveCounts()) c[name] = n;
  return c;
}

StatusView Services::Status() { return Status(status_reads.Get()); }

StatusView Services::Status(const StatusReads::Snapshot& stored) {
  StatusView s;
  s.version = CONCLAVE_VERSION;
  s.uptime_ms = UptimeMs();
  s.pid = core.pid;
  s.state_dir = core.config.state_dir;
  s.database_path = core.config.database_path;
  s.listener = core.listener;
  s.last_seq = core.bus.last_seq();
  s.schema_version = stored.schema_version;
  s.profiles_dir = core.config.profiles_dir;
  s.allocator = HeapAllocator();
  s.sqlite = store::SqliteLibrary();
  s.counts = Counts(stored);
  const int64_t now = core.clock.NowMs();
  for (const auto& c : stored.cooldowns) {
    if (c.until_ms > now) s.cooldowns.push_back({c.profile, c.until_ms, c.reason});
  }
  s.spend = stored.spend;
  s.disk = retention.disk();
  return s;
}

std::vector<ProfileView> Services::Profiles() {
  auto cooldowns = scheduler.Cooldowns();
  std::vector<ProfileView> out;
  for (const auto& p : core.profiles.profiles) {
    ProfileView v{p.name, p.family, p.type, p.brief, p.parser, p.source_file, p.template_name,
                  p.command, p.timeout_s, p.idle_timeout_s, p.max_concurrent,
                  core.dispatches.CountRunningForProfile(p.name), p.isolate_home, 0};
    for (const auto& c : cooldowns) {
      if (c.profile == p.name) v.cooldown_until_ms = c.until_ms;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<ProfileErrorView> Services::ProfileErrors() {
  std::vector<ProfileErrorView> out;
  for (const auto& e : core.profiles.errors) out.push_back({e.file, e.field, e.error});
  return out;
}

}  // namespace conclave::service
