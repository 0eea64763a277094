// Bench section `api` (run only when named: `--only api`): what gRPC's server API style costs
// on this build, before conclaved does anything. Every row is against the ping server, a bare
// server of gRPC's async API with one completion-queue thread (conclaved's style since
// a93661fc). Beside it:
//   `bench --serve-callback-ping S`      the same ping on gRPC's callback API (conclaved's style
//                                        until then): gRPC runs two "nexting" threads that take
//                                        turns polling and hand each completion to the other;
//   the bare loop server                 each call posted to an asio loop on the main thread,
//                                        which finishes it (conclaved's structure);
//   `bench --serve-async-loop-health S`  the bare loop server with gRPC's default health
//                                        service (a callback service, which conclaved
//                                        registered until it served health on its own queue)
//                                        beside it.
// And conclaved's ListHandles (its cheapest call through the loop), for scale. Rows: round trip
// p50 and the server's CPU per call (from /proc, over 6,000 calls a side per repetition,
// alternated 200 at a time).
#include <cstdio>

#include "bench_sections.h"

namespace bench {

void RunApiStyle(Env& env) {
  struct Server {
    Server(const char* r, const char* m, std::string s) : row(r), mode(m), socket(std::move(s)) {}
    const char* row;   // row name prefix
    const char* mode;  // `bench MODE SOCKET`, or null: the loop server already running
    std::string socket;
    Child child;
    pid_t pid = -1;
    std::unique_ptr<v1::Conclave::Stub> stub;
    double cpu = 0;
    std::vector<double> lat;
  };
  std::vector<Server> servers;
  servers.emplace_back("callback ping server", "--serve-callback-ping", env.root + "/cb.sock");
  servers.emplace_back("bare loop server", nullptr, env.loop_socket);
  servers.emplace_back("bare loop server, gRPC's health service beside it",
                       "--serve-async-loop-health", env.root + "/health.sock");
  int distinct = 400;
  // conclaved itself, for scale: ListHandles, its cheapest call through the loop.
  servers.emplace_back("conclaved ListHandles", nullptr, env.daemon.socket());
  for (auto& s : servers) {
    if (s.socket == env.daemon.socket()) {
      s.pid = env.daemon.pid();
      s.stub = Stub(s.socket, ++distinct);
      continue;
    }
    if (s.mode) {
      s.child = Child({env.self, s.mode, s.socket}, s.socket + ".log");
      if (!WaitUntilServing(s.socket, std::chrono::seconds(30))) {
        std::fprintf(stderr, "bench: %s did not start\n", s.mode);
        std::exit(1);
      }
    }
    s.pid = s.mode ? s.child.pid() : env.loop.pid();
    s.stub = Stub(s.socket, ++distinct);
  }
  auto ping = Stub(env.ping_socket, ++distinct);
  constexpr int kN = 6000, kChunk = 200;
  for (int rep = 0; rep < env.reps; ++rep) {
    std::fprintf(stderr, "bench: api, rep %d\n", rep + 1);
    double ping_cpu = 0;
    std::vector<double> ping_lat;
    for (auto& s : servers) {
      s.cpu = 0;
      s.lat.clear();
    }
    auto timed = [&](v1::Conclave::Stub& stub, pid_t pid, double* cpu, std::vector<double>* lat) {
      double c0 = ProcessCpuMicros(pid);
      auto v = pid == env.daemon.pid() ? TimeCalls(kChunk, [&] {
        auto ctx = Ctx();
        v1::ListHandlesRequest req;
        v1::ListHandlesReply resp;
        return stub.ListHandles(ctx.get(), req, &resp).ok();
      }) : PingLatencies(stub, kChunk);
      *cpu += ProcessCpuMicros(pid) - c0;
      lat->insert(lat->end(), v.begin(), v.end());
    };
    for (int done = 0; done < kN; done += kChunk) {
      timed(*ping, env.ping.pid(), &ping_cpu, &ping_lat);
      for (auto& s : servers) timed(*s.stub, s.pid, &s.cpu, &s.lat);
    }
    for (auto& s : servers) {
      Row& p50 = env.table.Get(std::string(s.row) + ": round trip p50", "µs", "ping");
      p50.conclave.push_back(Percentile(s.lat, 50));
      p50.bare.push_back(Percentile(ping_lat, 50));
      Row& cpu = env.table.Get(std::string(s.row) + ": server CPU per call", "µs", "ping");
      cpu.conclave.push_back(s.cpu / kN);
      cpu.bare.push_back(ping_cpu / kN);
    }
  }
  for (auto& s : servers) {
    if (s.mode) s.child.Stop();
  }
}

}  // namespace bench
