// Bench sections over plain RPCs: unary round trips, Send latency/throughput/CPU, Send → Wait
// wake latency, and 10k parked Waits. Each repetition measures the bare ping server too, the
// unary, send and wake sections the bare loop server (bench_loop_server.cpp), and the send and
// wake sections that server with the daemon's store.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "bench_sections.h"

namespace bench {

std::vector<double> TimeCalls(int n, const std::function<bool()>& fn) {
  std::vector<double> out;
  out.reserve(n);
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    bool ok = fn();
    out.push_back(Micros(Clock::now() - t0));
    if (!ok) ++failed;
  }
  if (failed) std::fprintf(stderr, "bench:   %d of %d calls failed\n", failed, n);
  return out;
}

bool RegisterHandle(v1::Conclave::Stub& stub, const std::string& name) {
  auto ctx = Ctx();
  v1::RegisterHandleRequest req;
  req.set_name(name);
  v1::Handle resp;
  return stub.RegisterHandle(ctx.get(), req, &resp).ok();
}

bool SendTo(v1::Conclave::Stub& stub, const std::string& to, const std::string& subject,
            std::chrono::milliseconds timeout) {
  auto ctx = Ctx(timeout);
  v1::SendRequest req;
  req.set_to(to);
  req.set_from("bench");
  req.set_type("status");
  req.set_subject(subject);
  req.set_body("a short status line from the benchmark");
  v1::SendReply resp;
  return stub.Send(ctx.get(), req, &resp).ok();
}

std::map<std::string, int64_t> Counts(v1::Conclave::Stub& stub, int64_t* last_seq,
                                     std::chrono::milliseconds timeout, bool* answered) {
  auto ctx = Ctx(timeout);
  v1::GetStatusRequest req;
  v1::StatusReply resp;
  bool ok = stub.GetStatus(ctx.get(), req, &resp).ok();
  if (answered) *answered = ok;
  if (last_seq) *last_seq = resp.last_seq();
  return {resp.counts().begin(), resp.counts().end()};
}

std::vector<double> PingLatencies(const Env& env, int n) {
  auto stub = Stub(env.ping_socket, 1);
  return PingLatencies(*stub, n);
}

namespace {
// Latencies (µs) of n calls of one unary method with an empty request.
template <typename Req, typename Resp>
std::vector<double> TimeUnary(
    int n, v1::Conclave::Stub& stub,
    grpc::Status (v1::Conclave::Stub::*method)(grpc::ClientContext*, const Req&, Resp*)) {
  return TimeCalls(n, [&] {
    auto ctx = Ctx();
    Req req;
    Resp resp;
    return (stub.*method)(ctx.get(), req, &resp).ok();
  });
}
}  // namespace

std::vector<double> PingLatencies(v1::Conclave::Stub& ping, int n) {
  return TimeUnary(n, ping, &v1::Conclave::Stub::GetStatus);
}

std::vector<std::vector<double>> Interleaved(
    int n, int chunk, const std::vector<std::function<std::vector<double>(int)>>& parts) {
  std::vector<std::vector<double>> out(parts.size());
  for (int done = 0, round = 0; done < n; done += chunk, ++round) {
    int k = std::min(chunk, n - done);
    for (size_t j = 0; j < parts.size(); ++j) {
      // Every other round runs the parts in reverse, so none always goes first (after the
      // host idled) or last (while the previous part's after-work still runs).
      size_t i = round % 2 ? parts.size() - 1 - j : j;
      auto v = parts[i](k);
      out[i].insert(out[i].end(), v.begin(), v.end());
    }
  }
  return out;
}

std::vector<double> WakeLatencies(v1::Conclave::Stub& stub, const std::string& handle, int n) {
  std::vector<double> out;
  int64_t cursor = 0;
  int64_t base = Counts(stub, &cursor)["waiters"];
  for (int i = 0; i < n; ++i) {
    auto ctx = Ctx(std::chrono::seconds(60));
    v1::WaitRequest req;
    req.set_to(handle);
    req.set_after_seq(cursor);
    req.set_timeout_ms(30000);
    v1::WaitReply resp;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Clock::time_point woke;
    stub.async()->Wait(ctx.get(), &req, &resp, [&](grpc::Status) {
      auto now = Clock::now();
      std::lock_guard<std::mutex> lk(mu);
      woke = now;
      done = true;
      cv.notify_one();
    });
    // Parked once the daemon counts it (or it already returned: a stale cursor).
    for (;;) {
      {
        std::lock_guard<std::mutex> lk(mu);
        if (done) break;
      }
      if (Counts(stub)["waiters"] > base) break;
    }
    auto t0 = Clock::now();
    SendTo(stub, handle, "wake " + std::to_string(i));
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return done; });
    out.push_back(Micros(woke - t0));
    if (resp.cursor() > cursor) cursor = resp.cursor();
  }
  return out;
}

// How many of conclaved's idle spells began with a poll between two GetStatus counts, and how
// many of them work ended (its loop_poll_us; nothing for a daemon without the counts).
static void PrintLoopPolls(const std::string& what, std::map<std::string, int64_t> before,
                           std::map<std::string, int64_t> after) {
  if (!after.count("loop_polls")) return;
  std::fprintf(stderr, "bench:   %s: %ld idle spells of the loop began with a poll, %ld of them "
               "ended by work while polling\n", what.c_str(),
               static_cast<long>(after["loop_polls"] - before["loop_polls"]),
               static_cast<long>(after["loop_polls_caught"] - before["loop_polls_caught"]));
}

// A ping server whose queue thread polls before it sleeps, as the daemon's loop does with
// loop_poll_us 100: what polling gives a server with nothing else of the daemon. In
// stretches of their own after the unary section's other rows (polling while the bench calls
// another server burns a CPU beside it), each alternating the ping, GetStatus and that server
// 100 calls at a time, with both ping servers' CPU per call.
static void RunPollingPing(Env& env, v1::Conclave::Stub& stub, v1::Conclave::Stub& ping_stub) {
  constexpr int kN = 2000;
  const std::string socket = env.root + "/polling-ping.sock";
  Child server({env.self, "--serve-polling-ping", socket}, env.root + "/polling-ping.log");
  if (!WaitUntilServing(socket, std::chrono::seconds(30))) {
    std::fprintf(stderr, "bench: the polling ping server did not start; its rows are left out\n");
    return;
  }
  auto polling_stub = Stub(socket, 5);
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: unary, rep %d: a ping server that polls\n", rep + 1);
    double ping_cpu = 0, polling_cpu = 0;
    auto timed_cpu = [](pid_t pid, double* cpu, const std::function<std::vector<double>()>& run) {
      auto t0 = SampleThreads(pid);
      auto v = run();
      *cpu += CpuSince(t0, pid);
      return v;
    };
    auto parts = Interleaved(kN, 100, {
        [&](int k) {
          return timed_cpu(env.ping.pid(), &ping_cpu, [&] { return PingLatencies(ping_stub, k); });
        },
        [&](int k) { return TimeUnary(k, stub, &v1::Conclave::Stub::GetStatus); },
        [&](int k) {
          return timed_cpu(server.pid(), &polling_cpu,
                           [&] { return PingLatencies(*polling_stub, k); });
        }});
    const double ping_p50 = Percentile(parts[0], 50);
    Row& polling = env.table.Get(
        "ping server that polls before it sleeps, as the loop does: round trip p50", "µs", "ping");
    polling.conclave.push_back(Percentile(parts[2], 50));
    polling.bare.push_back(ping_p50);
    Row& beside = env.table.Get("GetStatus round trip p50, beside a ping server that polls", "µs",
                                "ping");
    beside.conclave.push_back(Percentile(parts[1], 50));
    beside.bare.push_back(ping_p50);
    Row& against = env.table.Get("GetStatus round trip p50 against the ping server that polls",
                                 "µs", "ping server that polls");
    against.conclave.push_back(Percentile(parts[1], 50));
    against.bare.push_back(Percentile(parts[2], 50));
    Row& cpu = env.table.Get("ping server that polls: CPU per ping", "µs", "ping server per ping");
    cpu.conclave.push_back(polling_cpu / kN);
    cpu.bare.push_back(ping_cpu / kN);
  }
  server.Stop();
}

void RunUnary(Env& env) {
  constexpr int kN = 2000;
  auto stub = Stub(env.daemon.socket(), 2);
  auto ping_stub = Stub(env.ping_socket, 1);
  auto loop_stub = Stub(env.loop_socket, 3);
  auto add = [&](const char* name, const std::vector<double>& v, double pct, double bare) {
    Row& r = env.table.Get(name, "µs", "ping");
    r.conclave.push_back(Percentile(v, pct));
    r.bare.push_back(bare);
  };
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: unary, rep %d\n", rep + 1);
    auto parts = Interleaved(kN, 100, {
        [&](int k) { return PingLatencies(*ping_stub, k); },
        [&](int k) { return TimeUnary(k, *stub, &v1::Conclave::Stub::GetStatus); },
        [&](int k) { return TimeUnary(k, *stub, &v1::Conclave::Stub::ListHandles); },
        [&](int k) { return TimeUnary(k, *loop_stub, &v1::Conclave::Stub::ListHandles); }});
    const auto& ping = parts[0];
    const auto& status = parts[1];
    const auto& handles = parts[2];
    const auto& loop = parts[3];
    double p50 = Percentile(ping, 50), p99 = Percentile(ping, 99);
    add("GetStatus round trip p50", status, 50, p50);
    add("GetStatus round trip p99", status, 99, p99);
    add("ListHandles round trip p50", handles, 50, p50);
    add("ListHandles round trip p99", handles, 99, p99);
    add("bare loop server (no store): round trip p50", loop, 50, p50);
    add("bare loop server (no store): round trip p99", loop, 99, p99);
  }
  // A ping server that burns, before each reply, the on-CPU time a GetStatus costs the daemon
  // beyond what a ping costs the ping server, as measured in the same stretch so far: a server
  // as costly per call as the daemon with nothing else of it. Its round trip against the
  // ping's is what that CPU adds when spent before the reply; GetStatus against it, what the
  // daemon adds besides. It overstates the first and understates the second, as far as the
  // daemon's CPU is spent off the call's path (after its reply, or on work of its own).
  // Stretches of their own, after every repetition of the rows above, which run with no such
  // server started: its spinning slows the ping beside it (a ping p50 of 106 and 135 µs against
  // 77 and 112 µs without it, in two alternated pairs of runs), and /proc is read between the
  // blocks.
  const std::string spin_socket = env.root + "/spin-ping.sock";
  Child spin_server({env.self, "--serve-spin-ping", spin_socket}, env.root + "/spin-ping.log");
  const bool spin_ok = WaitUntilServing(spin_socket, std::chrono::seconds(30));
  if (!spin_ok) {
    std::fprintf(stderr, "bench: the spinning ping server did not start; its rows are left out\n");
  }
  auto spin_stub = Stub(spin_socket, 4);
  for (int rep = 0; spin_ok && rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: unary, rep %d: a ping server as costly\n", rep + 1);
    double ping_cpu = 0, status_cpu = 0;
    int ping_calls = 0, status_calls = 0;
    auto timed_cpu = [](pid_t pid, double* cpu, int* calls, int k,
                        const std::function<std::vector<double>()>& run) {
      auto t0 = SampleThreads(pid);
      auto v = run();
      *cpu += CpuSince(t0, pid);
      *calls += k;
      return v;
    };
    auto costly = Interleaved(kN, 100, {
        [&](int k) {
          return timed_cpu(env.ping.pid(), &ping_cpu, &ping_calls, k,
                           [&] { return PingLatencies(*ping_stub, k); });
        },
        [&](int k) {
          return timed_cpu(env.daemon.pid(), &status_cpu, &status_calls, k, [&] {
            return TimeUnary(k, *stub, &v1::Conclave::Stub::GetStatus);
          });
        },
        [&](int k) {
          // The first round runs it last, after both have been measured once.
          v1::SendRequest req;
          req.set_body(std::to_string(
              std::max(0.0, status_cpu / status_calls - ping_cpu / ping_calls)));
          return TimeCalls(k, [&] {
            auto ctx = Ctx();
            v1::SendReply resp;
            return spin_stub->Send(ctx.get(), req, &resp).ok();
          });
        }});
    Row& cpu = env.table.Get("daemon CPU per GetStatus", "µs", "ping server per ping");
    cpu.conclave.push_back(status_cpu / status_calls);
    cpu.bare.push_back(ping_cpu / ping_calls);
    const double costly_ping = Percentile(costly[0], 50);
    add("GetStatus round trip p50, beside a ping server as costly", costly[1], 50, costly_ping);
    add("ping server as costly as GetStatus (it burns the difference): round trip p50",
        costly[2], 50, costly_ping);
    Row& same = env.table.Get("GetStatus round trip p50 against the ping server as costly", "µs",
                              "ping server as costly");
    same.conclave.push_back(Percentile(costly[1], 50));
    same.bare.push_back(Percentile(costly[2], 50));
  }
  spin_server.Stop();
  RunPollingPing(env, *stub, *ping_stub);
}

LoadResult SendLoad(const std::string& socket, pid_t server, int threads, double seconds) {
  std::vector<std::unique_ptr<v1::Conclave::Stub>> stubs;
  for (int i = 0; i < threads; ++i) {
    stubs.push_back(Stub(socket, 100 + i));
    SendTo(*stubs.back(), "bench-sink", "warm-up");  // connect before the clock starts
  }
  std::vector<std::vector<double>> lat(threads);
  std::atomic<bool> go{false};
  std::atomic<long> ops{0}, failed{0};
  Clock::time_point until;
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i) {
    ts.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      while (Clock::now() < until) {
        auto t0 = Clock::now();
        if (!SendTo(*stubs[i], "bench-sink", "load")) failed.fetch_add(1);
        lat[i].push_back(Micros(Clock::now() - t0));
        ops.fetch_add(1);
      }
    });
  }
  auto counts0 = Counts(*stubs[0]);
  double cpu0 = ProcessCpuMicros(server);
  auto t0 = Clock::now();
  until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  go = true;
  for (auto& t : ts) t.join();
  double elapsed = SecondsSince(t0);
  double cpu1 = ProcessCpuMicros(server);
  LoadResult r;
  auto counts1 = Counts(*stubs[0]);
  r.commits = counts1["commits"] - counts0["commits"];
  r.ops = ops.load();
  PrintLoopPolls(std::to_string(r.ops) + " Sends from " + std::to_string(threads) + " client(s)",
                 counts0, counts1);
  // A failed Send costs the server less than one answered: the figures would flatter it.
  if (failed.load()) {
    std::fprintf(stderr, "bench:   %ld of %ld Sends failed on %s\n", failed.load(), ops.load(),
                 socket.c_str());
  }
  r.qps = ops.load() / elapsed;
  r.cpu_per_op_us = ops.load() ? (cpu1 - cpu0) / ops.load() : 0;
  for (auto& v : lat) r.latencies.insert(r.latencies.end(), v.begin(), v.end());
  return r;
}

void RunSend(Env& env) {
  constexpr double kSeconds = 3;
  auto stub = Stub(env.daemon.socket(), 3);
  RegisterHandle(*stub, "bench-sink");
  for (int rep = 0; rep < env.reps; ++rep) {
    for (int threads : {1, 16}) {
      std::fprintf(stderr, "bench: send, rep %d, %d client(s)\n", rep + 1, threads);
      LoadResult ping = SendLoad(env.ping_socket, env.ping.pid(), threads, kSeconds);
      LoadResult send = SendLoad(env.daemon.socket(), env.daemon.pid(), threads, kSeconds);
      std::string n = threads == 1 ? "1 client" : std::to_string(threads) + " clients";
      auto add = [&](const std::string& name, const char* unit, double c, double b, bool hib) {
        Row& r = env.table.Get(name, unit, "ping", hib);
        r.conclave.push_back(c);
        r.bare.push_back(b);
      };
      add("Send ack p50, " + n, "µs", Percentile(send.latencies, 50),
          Percentile(ping.latencies, 50), false);
      add("Send ack p99, " + n, "µs", Percentile(send.latencies, 99),
          Percentile(ping.latencies, 99), false);
      add("Send throughput, " + n, "/s", send.qps, ping.qps, true);
      add("daemon CPU per Send, " + n, "µs", send.cpu_per_op_us, ping.cpu_per_op_us, false);
      // The daemon's structure with no store, in the same run: what the hop to a loop and the
      // reply finished from it cost on their own, out of the daemon's figures above; then the
      // same with the daemon's store behind each Send.
      if (env.loop.alive()) {
        LoadResult loop = SendLoad(env.loop_socket, env.loop.pid(), threads, kSeconds);
        add("bare loop server (no store): Send throughput, " + n, "/s", loop.qps, ping.qps, true);
        add("bare loop server (no store): CPU per Send, " + n, "µs", loop.cpu_per_op_us,
            ping.cpu_per_op_us, false);
      }
      if (env.loop_store.alive()) {
        LoadResult store =
            SendLoad(env.loop_store_socket, env.loop_store.pid(), threads, kSeconds);
        add("bare loop server with the daemon's store: Send throughput, " + n, "/s", store.qps,
            ping.qps, true);
        add("bare loop server with the daemon's store: CPU per Send, " + n, "µs",
            store.cpu_per_op_us, ping.cpu_per_op_us, false);
        // How many Sends share a commit, in conclaved and in that server: a commit's cost is
        // shared by its Sends, so CPU per Send compares only as far as these do.
        if (send.commits > 0 && store.commits > 0) {
          Row& r = env.table.Get("Sends a commit, " + n, "Sends", "the store server");
          r.conclave.push_back(static_cast<double>(send.ops) / send.commits);
          r.bare.push_back(static_cast<double>(store.ops) / store.commits);
        }
      }
    }
  }
}

void RunWake(Env& env) {
  constexpr int kN = 300;
  auto stub = Stub(env.daemon.socket(), 4);
  auto ping_stub = Stub(env.ping_socket, 1);
  auto loop_stub = Stub(env.loop_socket, 5);
  auto store_stub = Stub(env.loop_store_socket, 6);
  RegisterHandle(*stub, "bench-wake");
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: wake, rep %d\n", rep + 1);
    auto counts0 = Counts(*stub);
    auto parts = Interleaved(
        kN, 20, {[&](int k) { return PingLatencies(*ping_stub, k); },
                 [&](int k) { return WakeLatencies(*stub, "bench-wake", k); },
                 [&](int k) { return WakeLatencies(*loop_stub, "bench-wake", k); },
                 [&](int k) { return WakeLatencies(*store_stub, "bench-wake", k); }});
    PrintLoopPolls(std::to_string(parts[1].size()) + " wakes", counts0, Counts(*stub));
    const auto& ping = parts[0];
    auto add = [&](const char* name, const std::vector<double>& v, double pct) {
      Row& r = env.table.Get(name, "µs", "ping");
      r.conclave.push_back(Percentile(v, pct));
      r.bare.push_back(Percentile(ping, pct));
    };
    add("Send → parked Wait woken p50", parts[1], 50);
    add("Send → parked Wait woken p99", parts[1], 99);
    add("bare loop server (no store): Send → parked Wait woken p50", parts[2], 50);
    add("bare loop server (no store): Send → parked Wait woken p99", parts[2], 99);
    add("bare loop server with the daemon's store: Send → parked Wait woken p50", parts[3], 50);
    add("bare loop server with the daemon's store: Send → parked Wait woken p99", parts[3], 99);
  }
}

namespace {

double IdleCpuPercent(pid_t pid, int seconds) {
  double c0 = ProcessCpuMicros(pid);
  auto t0 = Clock::now();
  IdleFor(std::chrono::seconds(seconds));
  return (ProcessCpuMicros(pid) - c0) / (SecondsSince(t0) * 1e6) * 100.0;
}

struct Parked {
  grpc::ClientContext ctx;
  v1::WaitRequest req;
  v1::WaitReply resp;
};

}  // namespace

void RunPark(Env& env) {
  constexpr int kParked = 10000, kChannels = 10, kWakes = 200;
  auto stub = Stub(env.daemon.socket(), 5);
  RegisterHandle(*stub, "bench-wake");
  std::vector<std::unique_ptr<v1::Conclave::Stub>> stubs;
  for (int i = 0; i < kChannels; ++i) stubs.push_back(Stub(env.daemon.socket(), 200 + i));
  pid_t pid = env.daemon.pid();
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: park, rep %d: none parked\n", rep + 1);
    double rss0 = ProcessRssMiB(pid);
    double idle0 = IdleCpuPercent(pid, env.idle_s);
    auto wake0 = WakeLatencies(*stub, "bench-wake", kWakes);

    std::fprintf(stderr, "bench: park, rep %d: parking %d Waits\n", rep + 1, kParked);
    int64_t head = 0;
    int64_t base = Counts(*stub, &head)["waiters"];
    std::mutex mu;
    std::condition_variable cv;
    int outstanding = kParked;
    std::vector<std::unique_ptr<Parked>> parked;
    for (int i = 0; i < kParked; ++i) {
      auto p = std::make_unique<Parked>();
      p->req.set_to("parked-" + std::to_string(i % 1000));
      if (i % 4 == 1) p->req.add_task_ids(1000000 + i);  // some wait on a task instead
      if (i % 4 == 2) p->req.add_types("escalation");
      p->req.set_after_seq(head);
      p->req.set_timeout_ms(3600 * 1000);
      stubs[i % kChannels]->async()->Wait(&p->ctx, &p->req, &p->resp, [&](grpc::Status) {
        std::lock_guard<std::mutex> lk(mu);
        if (--outstanding == 0) cv.notify_one();
      });
      parked.push_back(std::move(p));
    }
    auto deadline = Clock::now() + std::chrono::seconds(120);
    while (Counts(*stub)["waiters"] < base + kParked && Clock::now() < deadline) {
      IdleFor(std::chrono::milliseconds(20));  // polling interval, not a synchronisation
    }
    double rss1 = ProcessRssMiB(pid);
    double idle1 = IdleCpuPercent(pid, env.idle_s);
    auto wake1 = WakeLatencies(*stub, "bench-wake", kWakes);
    for (auto& p : parked) p->ctx.TryCancel();
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return outstanding == 0; });
    }
    while (Counts(*stub)["waiters"] > base && Clock::now() < deadline) {
      IdleFor(std::chrono::milliseconds(20));
    }
    auto add = [&](const char* name, const char* unit, double c, double b) {
      Row& r = env.table.Get(name, unit, "none parked");
      r.conclave.push_back(c);
      r.bare.push_back(b);
    };
    add("10k parked Waits: daemon RSS", "MiB", rss1, rss0);
    add("10k parked Waits: daemon idle CPU", "%", idle1, idle0);
    add("10k parked Waits: one wake p50", "µs", Percentile(wake1, 50), Percentile(wake0, 50));
    add("10k parked Waits: one wake p99", "µs", Percentile(wake1, 99), Percentile(wake0, 99));
  }
}

}  // namespace bench
