// Bench section `api` (run only when named: `--only api`): what gRPC's server API style costs
// on this build, before conclaved does anything. The ping server and the bare loop server
// use the callback API (as conclaved did until it moved to api/async_calls): gRPC then runs
// two "nexting" threads that take turns polling and hand each completion to the other. Beside
// them, bare servers of the same build on gRPC's async API with one completion-queue thread:
//   `bench --serve-async S`             answers every unary call on that thread;
//   `bench --serve-async-loop S`        posts each call to an asio loop on the main thread,
//                                       which finishes it (conclaved's structure);
//   `bench --serve-async-loop-health S` the same, with gRPC's default health service (a
//                                       callback service, which conclaved registered until
//                                       it served health on its own queue) beside it.
// And conclaved's ListHandles (its cheapest call through the loop), for scale. Rows: round trip
// p50 and the server's CPU per call (from /proc, over 6,000 calls a side per repetition,
// alternated 200 at a time), each against the callback ping server's.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <thread>

#include "bench_sections.h"
#include "common/runtime.h"

namespace bench {
namespace {

// One call's state on the completion queue: requested, its request read, its reply finished.
struct AsyncCall {
  grpc::GenericServerContext ctx;
  grpc::GenericServerAsyncReaderWriter stream{&ctx};
  grpc::ByteBuffer request;
  grpc::Slice empty{""};
  grpc::ByteBuffer reply{&empty, 1};
  enum State { kRequested, kReading, kFinishing } state = kRequested;
};

}  // namespace

int ServeAsync(const std::string& socket, bool loop, bool health) {
  unlink(socket.c_str());
  // As the other bare servers: gRPC's threads (and here the completion-queue thread)
  // SCHED_BATCH, the loop SCHED_OTHER (common/runtime.h). The process ends on SIGTERM.
  conclave::BeginBackgroundThreads();
  if (health) grpc::EnableDefaultHealthCheckService(true);
  grpc::AsyncGenericService service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterAsyncGenericService(&service);
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.SetMaxSendMessageSize(16 << 20);
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "bench: the async server cannot listen on %s\n", socket.c_str());
    return 1;
  }
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  auto request_next = [&] {
    auto* c = new AsyncCall;
    service.RequestCall(&c->ctx, &c->stream, cq.get(), cq.get(), c);
  };
  std::thread poller([&] {
    request_next();
    void* tag = nullptr;
    bool ok = false;
    while (cq->Next(&tag, &ok)) {
      auto* c = static_cast<AsyncCall*>(tag);
      switch (c->state) {
        case AsyncCall::kRequested:
          if (!ok) {
            delete c;
            break;
          }
          request_next();
          c->state = AsyncCall::kReading;
          c->stream.Read(&c->request, c);
          break;
        case AsyncCall::kReading:
          c->state = AsyncCall::kFinishing;
          if (!ok) {
            c->stream.Finish(grpc::Status::OK, c);
          } else if (loop) {
            boost::asio::post(io, [c] {
              c->stream.WriteAndFinish(c->reply, grpc::WriteOptions(), grpc::Status::OK, c);
            });
          } else {
            c->stream.WriteAndFinish(c->reply, grpc::WriteOptions(), grpc::Status::OK, c);
          }
          break;
        case AsyncCall::kFinishing:
          delete c;
          break;
      }
    }
  });
  conclave::EndBackgroundThreads();
  if (loop) io.run();
  poller.join();
  return 0;
}

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
  servers.emplace_back("bare loop server (callback API)", nullptr, env.loop_socket);
  servers.emplace_back("bare async server (one thread)", "--serve-async", env.root + "/async.sock");
  servers.emplace_back("bare async loop server", "--serve-async-loop", env.root + "/aloop.sock");
  servers.emplace_back("bare async loop server, gRPC's health service beside it",
                       "--serve-async-loop-health", env.root + "/ahealth.sock");
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
