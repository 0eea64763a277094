// Bench section `oneloop` (run only when named: `--only oneloop`): the hop to the loop, measured
// by taking it away. conclaved has one completion-queue thread that reads every call and posts
// it to the loop, which finishes it. The alternative README weighs (Performance, "The hop to
// the loop") is the queue polled on the loop's own thread. The bare loop servers run both ways
// here, in the same run, against the ping server:
//   two threads  `bench --serve-loop S` and `--serve-loop-store S DB`: the default table's bare
//                loop servers (started by main);
//   one thread   `bench --serve-one-loop S` and `--serve-one-loop-store S DB`: the main thread
//                handles every completion that is ready, then runs the loop (a batch's commit,
//                the replies) before it waits again (ServeBareAsync, bench_ping_server.cpp).
// Rows: Send → parked Wait woken p50 and p99 (300 a side, alternated 20 at a time); a GetStatus
// round trip's p50 and p99 (2,000 a side, alternated 100 at a time; each server answers it on
// its loop's thread); CPU per Send at 1 and 16 clients; Sends a commit at 16 clients, one
// thread against two.
#include <cstdio>

#include "bench_sections.h"

namespace bench {

namespace {

struct LoopServer {
  std::string row;  // row name prefix
  std::string socket;
  pid_t pid = -1;
  std::unique_ptr<v1::Conclave::Stub> stub;
};

Child StartServer(const std::vector<std::string>& argv, const std::string& socket) {
  Child c(argv, socket + ".log");
  if (!WaitUntilServing(socket, std::chrono::seconds(30))) {
    std::fprintf(stderr, "bench: %s did not start\n", argv[1].c_str());
    std::exit(1);
  }
  return c;
}

}  // namespace

void RunOneLoop(Env& env) {
  Daemon maker;  // the one-thread store server's database, made by conclaved as main's is
  maker.StartNew(env.daemon_bin, env.root + "/one-loop-store");
  maker.Stop();
  const std::string one_socket = env.root + "/one-loop.sock";
  const std::string one_store_socket = env.root + "/one-loop-store.sock";
  Child one = StartServer({env.self, "--serve-one-loop", one_socket}, one_socket);
  Child one_store =
      StartServer({env.self, "--serve-one-loop-store", one_store_socket, maker.db_path()},
                  one_store_socket);
  const std::string no_store = "bare loop server (no store), ";
  const std::string store = "bare loop server with the daemon's store, ";
  std::vector<LoopServer> servers(4);
  servers[0] = {no_store + "two threads", env.loop_socket, env.loop.pid(), nullptr};
  servers[1] = {no_store + "one thread", one_socket, one.pid(), nullptr};
  servers[2] = {store + "two threads", env.loop_store_socket, env.loop_store.pid(), nullptr};
  servers[3] = {store + "one thread", one_store_socket, one_store.pid(), nullptr};
  int distinct = 600;
  for (auto& s : servers) s.stub = Stub(s.socket, ++distinct);
  auto ping = Stub(env.ping_socket, ++distinct);
  constexpr int kN = 300, kTrips = 2000;
  constexpr double kSeconds = 3;
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: oneloop, rep %d: wake\n", rep + 1);
    std::vector<std::function<std::vector<double>(int)>> sides = {
        [&](int k) { return PingLatencies(*ping, k); }};
    for (auto& s : servers) {
      sides.push_back([&s](int k) { return WakeLatencies(*s.stub, "bench-wake", k); });
    }
    auto parts = Interleaved(kN, 20, sides);
    std::fprintf(stderr, "bench: oneloop, rep %d: round trips\n", rep + 1);
    std::vector<std::function<std::vector<double>(int)>> trips = {sides[0]};
    for (auto& s : servers) {
      trips.push_back([&s](int k) { return PingLatencies(*s.stub, k); });
    }
    auto rounds = Interleaved(kTrips, 100, trips);
    for (size_t i = 0; i < servers.size(); ++i) {
      for (double pct : {50.0, 99.0}) {
        const std::string p = std::to_string(static_cast<int>(pct));
        Row& r = env.table.Get(servers[i].row + ": Send → parked Wait woken p" + p, "µs", "ping");
        r.conclave.push_back(Percentile(parts[i + 1], pct));
        r.bare.push_back(Percentile(parts[0], pct));
        Row& t = env.table.Get(servers[i].row + ": GetStatus round trip p" + p, "µs", "ping");
        t.conclave.push_back(Percentile(rounds[i + 1], pct));
        t.bare.push_back(Percentile(rounds[0], pct));
      }
    }
    for (int threads : {1, 16}) {
      std::fprintf(stderr, "bench: oneloop, rep %d, %d client(s)\n", rep + 1, threads);
      const std::string n = threads == 1 ? "1 client" : std::to_string(threads) + " clients";
      LoadResult bare = SendLoad(env.ping_socket, env.ping.pid(), threads, kSeconds);
      std::vector<LoadResult> loads;
      for (auto& s : servers) loads.push_back(SendLoad(s.socket, s.pid, threads, kSeconds));
      for (size_t i = 0; i < servers.size(); ++i) {
        Row& r = env.table.Get(servers[i].row + ": CPU per Send, " + n, "µs", "ping");
        r.conclave.push_back(loads[i].cpu_per_op_us);
        r.bare.push_back(bare.cpu_per_op_us);
      }
      const LoadResult& two = loads[2];
      const LoadResult& single = loads[3];
      if (threads > 1 && two.commits > 0 && single.commits > 0) {
        Row& r = env.table.Get(store + "one thread: Sends a commit, " + n, "Sends",
                               "two threads");
        r.conclave.push_back(static_cast<double>(single.ops) / single.commits);
        r.bare.push_back(static_cast<double>(two.ops) / two.commits);
      }
    }
  }
  one.Stop();
  one_store.Stop();
}

}  // namespace bench
