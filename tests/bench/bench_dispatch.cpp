// Bench sections over dispatches: Dispatch → the daemon's worker_done for a command profile
// running `true` (terminal cwd not a git repository) against posix_spawn+waitpid of `true` with
// the same argument, CPU per dispatch (in all and by thread), throughput with 8 terminals; and
// the loop under load (4 workers printing 8 MiB each) against the idle daemon.
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench_sections.h"
#include "exec/brief_renderer.h"

extern char** environ;

namespace bench {

const char kDispatchBrief[] = "true";

std::string DispatchWorkerArgument() {
  conclave::exec::BriefInput in;
  in.brief = kDispatchBrief;
  in.require_contract = false;  // a "command" profile gets none (RunSupervisor::Plan)
  return conclave::exec::RenderBriefWith(std::nullopt, in);
}

bool CreateTerminal(v1::Conclave::Stub& stub, const std::string& profile,
                    const std::string& handle, const std::string& cwd) {
  auto ctx = Ctx();
  v1::CreateTerminalRequest req;
  req.set_profile(profile);
  req.set_handle(handle);
  req.set_cwd(cwd);
  v1::Terminal resp;
  grpc::Status s = stub.CreateTerminal(ctx.get(), req, &resp);
  if (!s.ok()) std::fprintf(stderr, "bench: CreateTerminal %s: %s\n", handle.c_str(), Describe(s).c_str());
  return s.ok();
}

int64_t CreateTask(v1::Conclave::Stub& stub, const std::string& brief) {
  auto ctx = Ctx();
  v1::CreateTaskRequest req;
  req.set_brief(brief);
  req.set_title("bench");
  v1::CreateTaskReply resp;
  grpc::Status s = stub.CreateTask(ctx.get(), req, &resp);
  if (!s.ok()) std::fprintf(stderr, "bench: CreateTask: %s\n", Describe(s).c_str());
  return resp.task().id();
}

bool Dispatch(v1::Conclave::Stub& stub, int64_t task, const std::string& to) {
  auto ctx = Ctx();
  v1::DispatchRequest req;
  req.set_task_id(task);
  req.set_to(to);
  v1::DispatchInfo resp;
  grpc::Status s = stub.Dispatch(ctx.get(), req, &resp);
  if (!s.ok()) std::fprintf(stderr, "bench: Dispatch: %s\n", Describe(s).c_str());
  return s.ok();
}

bool WaitDone(v1::Conclave::Stub& stub, int64_t task, std::chrono::seconds within) {
  auto ctx = Ctx(within);
  v1::WaitRequest req;
  req.add_task_ids(task);
  req.add_types("worker_done");
  req.set_from("conclaved");
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(within).count();
  req.set_timeout_ms(ms - ms / 12);  // answered by the daemon before the deadline cuts the call
  v1::WaitReply resp;
  grpc::Status s = stub.Wait(ctx.get(), req, &resp);
  return s.ok() && resp.messages_size() > 0;
}

namespace {

// One posix_spawn of `true` with the argument the daemon's worker gets, and its reap. GNU true
// reads the locale when it is given one argument, so a bare `true` would be the cheaper child.
void SpawnTrue(const std::string& arg) {
  char arg0[] = "true";
  std::string arg1 = arg;
  char* argv[] = {arg0, arg1.data(), nullptr};
  pid_t pid;
  if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) == 0) {
    int st;
    waitpid(pid, &st, 0);
  }
}

}  // namespace

void RunDispatch(Env& env) {
  // 300 sequential dispatches: the daemon's CPU is read in clock ticks (10 ms), so one tick is
  // 0.03 ms per dispatch (0.1 ms with 100), and the p99 is not simply the slowest one.
  constexpr int kSequential = 300, kTerminals = 8, kPerTerminal = 40;
  auto stub = Stub(env.daemon.socket(), 6);
  std::string cwd = env.daemon.dir + "/work";
  const std::string worker_arg = DispatchWorkerArgument();
  for (int i = 0; i < kTerminals; ++i) {
    CreateTerminal(*stub, "bench-true", "bt-" + std::to_string(i), cwd);
  }
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: dispatch, rep %d: sequential\n", rep + 1);
    std::vector<int64_t> tasks;
    for (int i = 0; i < kSequential; ++i) tasks.push_back(CreateTask(*stub, kDispatchBrief));
    // 10 dispatches, then 10 bare spawns, and so on: both sides share the host's phases. The
    // daemon's CPU (read in clock ticks) is taken over the whole stretch — it idles while the
    // bench spawns — and the bench thread's (in ns) over its own spawn blocks.
    size_t next = 0;
    int failed = 0;
    double spawn_cpu = 0, spawn_sleeps = 0;
    const auto threads0 = SampleThreads(env.daemon.pid());
    double cpu0 = ProcessCpuMicros(env.daemon.pid());
    auto parts = Interleaved(kSequential, 10, {
        [&](int k) {
          std::vector<double> lat;
          for (int i = 0; i < k; ++i, ++next) {
            auto t0 = Clock::now();
            bool ok = Dispatch(*stub, tasks[next], "bt-0") && WaitDone(*stub, tasks[next]);
            lat.push_back(Micros(Clock::now() - t0));
            if (!ok) ++failed;
          }
          return lat;
        },
        [&](int k) {
          std::vector<double> spawn;
          double c0 = ThreadCpuMicros(), s0 = ThreadSleeps();
          for (int i = 0; i < k; ++i) {
            auto t0 = Clock::now();
            SpawnTrue(worker_arg);
            spawn.push_back(Micros(Clock::now() - t0));
          }
          spawn_cpu += ThreadCpuMicros() - c0;
          spawn_sleeps += ThreadSleeps() - s0;
          return spawn;
        }});
    const auto& lat = parts[0];
    const auto& spawn = parts[1];
    if (failed) {
      std::fprintf(stderr, "bench:   %d of %d dispatches failed or never finished\n", failed,
                   kSequential);
    }
    double cpu_per_dispatch = (ProcessCpuMicros(env.daemon.pid()) - cpu0) / kSequential;
    double cpu_per_spawn = spawn_cpu / kSequential;
    // The same stretch by thread (on-CPU ns, not ticks): the loop, its watcher (or gRPC's
    // completion-queue thread, with api_queue_thread), the launcher's thread (exec/launcher: it
    // writes the dispatch's files and spawns the worker, as the bench's posix_spawn spawns) and
    // every other live thread. And how often each went to sleep: every sleep is a wake-up after it,
    // on a CPU whose caches the worker's exec and the other threads have had meanwhile.
    std::map<std::string, ThreadSample> split;
    double sleeps = 0;
    for (const auto& [name, part] : ThreadsSince(threads0, SampleThreads(env.daemon.pid()))) {
      const bool own = name == kLoopThread || name == kQueueThread || name == kWatchThread ||
                       name == kLauncherThread;
      ThreadSample& sum = split[own ? name : std::string("other")];
      sum.cpu_us += part.cpu_us / kSequential;
      sum.sleeps += part.sleeps / kSequential;
      sleeps += part.sleeps / kSequential;
    }

    std::fprintf(stderr, "bench: dispatch, rep %d: %d terminals\n", rep + 1, kTerminals);
    std::vector<std::vector<int64_t>> work(kTerminals);
    for (auto& w : work) {
      for (int i = 0; i < kPerTerminal; ++i) w.push_back(CreateTask(*stub, kDispatchBrief));
    }
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int i = 0; i < kTerminals; ++i) {
      ts.emplace_back([&, i] {
        auto s = Stub(env.daemon.socket(), 300 + i);
        for (int64_t t : work[i]) {
          if (Dispatch(*s, t, "bt-" + std::to_string(i))) WaitDone(*s, t);
        }
      });
    }
    for (auto& t : ts) t.join();
    double rate = kTerminals * kPerTerminal / SecondsSince(t0);
    ts.clear();
    t0 = Clock::now();
    for (int i = 0; i < kTerminals; ++i) {
      ts.emplace_back([&] {
        for (int k = 0; k < kPerTerminal; ++k) SpawnTrue(worker_arg);
      });
    }
    for (auto& t : ts) t.join();
    double spawn_rate = kTerminals * kPerTerminal / SecondsSince(t0);

    // The loop's answers while it starts and finishes runs on 8 terminals: a GetStatus client
    // beside them (a run of its own, so the throughput above is not shared with it), against
    // the same client's GetStatus just before, with nothing running.
    std::fprintf(stderr, "bench: dispatch, rep %d: GetStatus beside %d terminals\n", rep + 1,
                 kTerminals);
    auto probe = Stub(env.daemon.socket(), 320);
    auto status_call = [&] {
      auto ctx = Ctx();
      v1::GetStatusRequest req;
      v1::StatusReply resp;
      return probe->GetStatus(ctx.get(), req, &resp).ok();
    };
    auto status_idle = TimeCalls(200, status_call);
    for (auto& w : work) {
      w.clear();
      for (int i = 0; i < kPerTerminal / 2; ++i) w.push_back(CreateTask(*stub, kDispatchBrief));
    }
    std::atomic<int> busy{kTerminals};
    std::vector<double> status_busy;
    std::thread prober([&] {
      while (busy.load() > 0) {
        auto v = TimeCalls(10, status_call);
        status_busy.insert(status_busy.end(), v.begin(), v.end());
      }
    });
    ts.clear();
    for (int i = 0; i < kTerminals; ++i) {
      ts.emplace_back([&, i] {
        auto s = Stub(env.daemon.socket(), 310 + i);
        for (int64_t t : work[i]) {
          if (Dispatch(*s, t, "bt-" + std::to_string(i))) WaitDone(*s, t);
        }
        --busy;
      });
    }
    for (auto& t : ts) t.join();
    prober.join();

    auto add = [&](const char* name, const char* unit, const char* label, double c, double b,
                   bool hib) {
      Row& r = env.table.Get(name, unit, label, hib);
      r.conclave.push_back(c);
      r.bare.push_back(b);
    };
    add("Dispatch → daemon's worker_done (`true`) p50", "ms", "spawn+wait",
        Percentile(lat, 50) / 1000, Percentile(spawn, 50) / 1000, false);
    add("Dispatch → daemon's worker_done (`true`) p99", "ms", "spawn+wait",
        Percentile(lat, 99) / 1000, Percentile(spawn, 99) / 1000, false);
    add("daemon CPU per dispatch", "ms", "parent CPU per posix_spawn", cpu_per_dispatch / 1000,
        cpu_per_spawn / 1000, false);
    // Each thread's part against the whole daemon's; the launcher's against the bench's spawns.
    add("daemon CPU per dispatch: the loop", "ms", "the whole daemon",
        split[kLoopThread].cpu_us / 1000, cpu_per_dispatch / 1000, false);
    // The loop polls gRPC's queue itself (api/queue_loop.h), woken by its watcher; a daemon
    // configured with api_queue_thread has a queue thread instead.
    const bool queue_thread = split.count(kQueueThread) > 0;
    if (queue_thread) {
      add("daemon CPU per dispatch: gRPC's queue thread", "ms", "the whole daemon",
          split[kQueueThread].cpu_us / 1000, cpu_per_dispatch / 1000, false);
    } else {
      add("daemon CPU per dispatch: the loop's watcher", "ms", "the whole daemon",
          split[kWatchThread].cpu_us / 1000, cpu_per_dispatch / 1000, false);
    }
    add("daemon CPU per dispatch: every other thread", "ms", "the whole daemon",
        split["other"].cpu_us / 1000, cpu_per_dispatch / 1000, false);
    add("daemon CPU per dispatch: the launcher's thread", "ms", "parent CPU per posix_spawn",
        split[kLauncherThread].cpu_us / 1000, cpu_per_spawn / 1000, false);
    // Sleeps: the bench's thread sleeps up to twice a spawn+wait (until the child has exec'd,
    // then in waitpid unless the child has exited by then); the daemon's threads between them,
    // each against the whole daemon's. Counted over the whole stretch, as the CPU is: the
    // daemon's idle threads' timeouts meanwhile (an accept thread's poll, 2 a second) are in it.
    add("daemon threads' sleeps per dispatch", "sleeps", "the bench's thread per spawn+wait",
        sleeps, spawn_sleeps / kSequential, false);
    add("daemon threads' sleeps per dispatch: the loop", "sleeps", "the whole daemon",
        split[kLoopThread].sleeps, sleeps, false);
    if (queue_thread) {
      add("daemon threads' sleeps per dispatch: gRPC's queue thread", "sleeps",
          "the whole daemon", split[kQueueThread].sleeps, sleeps, false);
    } else {
      add("daemon threads' sleeps per dispatch: the loop's watcher", "sleeps",
          "the whole daemon", split[kWatchThread].sleeps, sleeps, false);
    }
    add("daemon threads' sleeps per dispatch: every other thread", "sleeps", "the whole daemon",
        split["other"].sleeps, sleeps, false);
    add("daemon threads' sleeps per dispatch: the launcher's thread", "sleeps", "the whole daemon",
        split[kLauncherThread].sleeps, sleeps, false);
    add("dispatches completed per second, 8 terminals", "/s", "8 spawns in flight", rate,
        spawn_rate, true);
    add("GetStatus round trip beside 8 terminals dispatching p50", "µs", "idle",
        Percentile(status_busy, 50), Percentile(status_idle, 50), false);
    add("GetStatus round trip beside 8 terminals dispatching p99", "µs", "idle",
        Percentile(status_busy, 99), Percentile(status_idle, 99), false);
  }
}

void RunLoad(Env& env) {
  constexpr int kWorkers = 4;
  constexpr double kSeconds = 4;
  auto stub = Stub(env.daemon.socket(), 7);
  RegisterHandle(*stub, "bench-wake");
  // Each worker is a writer in its own git repository: it commits f.txt and names it under
  // CHANGES, so every run's end makes the daemon check the claim with git (written ≠
  // persisted), as a real writer's does.
  for (int i = 0; i < kWorkers; ++i) {
    std::string repo = env.daemon.dir + "/work-b8-" + std::to_string(i);
    std::string init = "git init -q '" + repo + "' && git -C '" + repo +
                       "' -c user.name=bench -c user.email=bench@localhost commit -q "
                       "--allow-empty -m start";
    if (std::system(init.c_str()) != 0) {
      std::fprintf(stderr, "bench: load: cannot make a git repository in %s\n", repo.c_str());
      std::exit(1);
    }
    CreateTerminal(*stub, "bench-8m", "b8-" + std::to_string(i), repo);
  }
  auto status_call = [](v1::Conclave::Stub& s) {
    auto ctx = Ctx();
    v1::GetStatusRequest req;
    v1::StatusReply resp;
    return s.GetStatus(ctx.get(), req, &resp).ok();
  };
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: load, rep %d: idle\n", rep + 1);
    auto wake_idle = WakeLatencies(*stub, "bench-wake", 100);
    auto status_idle = TimeCalls(300, [&] { return status_call(*stub); });

    std::fprintf(stderr, "bench: load, rep %d: %d workers × 8 MiB, repeatedly\n", rep + 1,
                 kWorkers);
    // Completions arrive on a Watch stream (a watcher, not a waiter), so the wake probe's
    // "is my Wait parked" count sees only its own Wait.
    std::mutex mu;
    std::condition_variable cv;
    std::set<int64_t> done;
    int not_success = 0;  // a worker_done whose outcome is not success (a failed claims check)
    auto watch_ctx = std::make_unique<grpc::ClientContext>();
    auto watch_stub = Stub(env.daemon.socket(), 402);
    v1::WatchRequest wreq;
    wreq.add_types("worker_done");
    wreq.set_from_now(true);
    auto reader = watch_stub->Watch(watch_ctx.get(), wreq);
    std::thread watcher([&] {
      v1::Message m;
      while (reader->Read(&m)) {
        std::lock_guard<std::mutex> lk(mu);
        done.insert(m.task_id());
        if (m.payload_json().find("\"outcome\":\"succeeded\"") == std::string::npos) ++not_success;
        cv.notify_all();
      }
    });
    std::atomic<bool> loading{true};
    std::vector<double> wake_load, status_load;
    std::thread waker([&] {
      auto s = Stub(env.daemon.socket(), 400);
      while (loading) {
        auto v = WakeLatencies(*s, "bench-wake", 5);
        wake_load.insert(wake_load.end(), v.begin(), v.end());
      }
    });
    std::thread prober([&] {
      auto s = Stub(env.daemon.socket(), 401);
      while (loading) {
        auto t0 = Clock::now();
        status_call(*s);
        status_load.push_back(Micros(Clock::now() - t0));
      }
    });
    auto start = Clock::now();
    int bursts = 0;
    while (bursts < 3 || SecondsSince(start) < kSeconds) {
      std::vector<int64_t> tasks;
      for (int i = 0; i < kWorkers; ++i) tasks.push_back(CreateTask(*stub, "eight mebibytes"));
      for (int i = 0; i < kWorkers; ++i) Dispatch(*stub, tasks[i], "b8-" + std::to_string(i));
      std::unique_lock<std::mutex> lk(mu);
      bool all = cv.wait_for(lk, std::chrono::seconds(120), [&] {
        for (int64_t t : tasks) {
          if (!done.count(t)) return false;
        }
        return true;
      });
      if (!all) std::fprintf(stderr, "bench: load: a burst did not finish in 120 s\n");
      ++bursts;
    }
    loading = false;
    waker.join();
    prober.join();
    watch_ctx->TryCancel();
    watcher.join();
    std::fprintf(stderr, "bench: load, rep %d: %d bursts, %zu wakes, %zu status calls\n",
                 rep + 1, bursts, wake_load.size(), status_load.size());
    if (not_success > 0) {
      std::fprintf(stderr, "bench: load, rep %d: %d of %d runs did not succeed (see daemon.log)\n",
                   rep + 1, not_success, bursts * kWorkers);
    }
    auto add = [&](const char* name, double c, double b) {
      Row& r = env.table.Get(name, "µs", "idle");
      r.conclave.push_back(c);
      r.bare.push_back(b);
    };
    add("loop under load (4 × 8 MiB finishing): wake p50", Percentile(wake_load, 50),
        Percentile(wake_idle, 50));
    add("loop under load (4 × 8 MiB finishing): wake p99", Percentile(wake_load, 99),
        Percentile(wake_idle, 99));
    add("loop under load (4 × 8 MiB finishing): GetStatus p99", Percentile(status_load, 99),
        Percentile(status_idle, 99));
  }
}

}  // namespace bench
