// The bare baseline server: the same gRPC build as conclaved (callback reactors, as conclaved
// used until it moved to the async API with one completion-queue thread; unix socket, same
// message size limits), answering any unary method at once with an empty message — no proto
// library of its own, no work. `bench --only api` times a bare async server beside it. It runs with the daemon's runtime
// settings (common/runtime.h, applied by bench's main). `bench --serve-ping SOCKET` runs
// it in a child process so its CPU can be read from /proc like the daemon's.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "bench_support.h"
#include "common/runtime.h"

namespace bench {
namespace {

class PingReactor final : public grpc::ServerGenericBidiReactor {
 public:
  PingReactor() { StartRead(&request_); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    StartWriteAndFinish(&reply_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer request_;
  grpc::Slice empty_{""};
  grpc::ByteBuffer reply_{&empty_, 1};
};

class PingService final : public grpc::CallbackGenericService {
 public:
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    return new PingReactor;
  }
};

}  // namespace

std::unique_ptr<grpc::Server> StartBareServer(const std::string& socket,
                                              grpc::CallbackGenericService* service,
                                              const char* what) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterCallbackGenericService(service);
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.SetMaxSendMessageSize(16 << 20);
  auto server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "bench: the %s server cannot listen on %s\n", what, socket.c_str());
  }
  return server;
}

int ServePing(const std::string& socket) {
  // Block the stop signals before gRPC starts threads, so sigwait below receives them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  unlink(socket.c_str());
  // As conclaved's: every gRPC thread SCHED_BATCH (common/runtime.h). Its main thread only
  // waits for the signal below.
  conclave::BeginBackgroundThreads();
  PingService service;
  auto server = StartBareServer(socket, &service, "ping");
  if (!server) return 1;
  int sig = 0;
  sigwait(&set, &sig);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}

}  // namespace bench
