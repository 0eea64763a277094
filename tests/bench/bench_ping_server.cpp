// The bare baseline servers: the same gRPC build as conclaved on a unix socket, with the same
// message size limits and the daemon's runtime settings (common/runtime.h, applied by bench's
// main), answering any unary method with an empty message: no proto library of their own, no
// work. Each runs in a child process so its CPU can be read from /proc like the daemon's.
//   `bench --serve-ping S`           the baseline of every RPC ratio: gRPC's async API with one
//                                    completion-queue thread that answers each call itself
//                                    (conclaved's API style since a93661fc, without its loop);
//   `bench --serve-callback-ping S`  the ping server of the bench until then: gRPC's callback
//                                    API (conclaved's style until a93661fc), for `--only api`.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <thread>

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

void Configure(grpc::ServerBuilder& builder, const std::string& socket) {
  unlink(socket.c_str());
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.SetMaxReceiveMessageSize(16 << 20);
  builder.SetMaxSendMessageSize(16 << 20);
}

}  // namespace

BareCall::BareCall() : reply_(&empty_, 1) {}

void BareCall::Reply(grpc::ByteBuffer reply) {
  reply_ = std::move(reply);
  Reply();
}

void BareCall::Reply() {
  state_ = kFinishing;
  stream_.WriteAndFinish(reply_, grpc::WriteOptions(), grpc::Status::OK, this);
}

void BareCall::Fail(const grpc::Status& status) {
  state_ = kFinishing;
  stream_.Finish(status, this);
}

int ServeBareAsync(const std::string& socket, const char* what, bool health,
                   boost::asio::io_context* loop, const std::function<void(BareCall*)>& handle) {
  // gRPC's threads SCHED_BATCH, the completion-queue thread and a loop SCHED_OTHER, as
  // conclaved's (common/runtime.h). The process ends on SIGTERM (nothing to flush).
  conclave::BeginBackgroundThreads();
  grpc::EnableDefaultHealthCheckService(health);
  grpc::AsyncGenericService service;
  grpc::ServerBuilder builder;
  Configure(builder, socket);
  builder.RegisterAsyncGenericService(&service);
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "bench: the %s server cannot listen on %s\n", what, socket.c_str());
    return 1;
  }
  auto request_next = [&] {
    auto* c = new BareCall;
    service.RequestCall(&c->ctx_, &c->stream_, cq.get(), cq.get(), c);
  };
  std::thread poller([&] {
    pthread_setname_np(pthread_self(), "grpc-queue");  // as conclaved's (api/async_calls)
    conclave::EndBackgroundThreads();
    request_next();
    void* tag = nullptr;
    bool ok = false;
    while (cq->Next(&tag, &ok)) {
      auto* c = static_cast<BareCall*>(tag);
      switch (c->state_) {
        case BareCall::kRequested:
          if (!ok) {
            delete c;
            break;
          }
          request_next();
          c->state_ = BareCall::kReading;
          c->stream_.Read(&c->request_, c);
          break;
        case BareCall::kReading:
          if (!ok) {
            c->state_ = BareCall::kFinishing;
            c->stream_.Finish(grpc::Status::OK, c);
          } else if (loop) {
            boost::asio::post(*loop, [c, &handle] { handle(c); });
          } else {
            handle(c);
          }
          break;
        case BareCall::kFinishing:
          delete c;
          break;
      }
    }
  });
  conclave::EndBackgroundThreads();
  if (loop) {
    auto work = boost::asio::make_work_guard(*loop);
    loop->run();
  }
  poller.join();
  return 0;
}

int ServePing(const std::string& socket) {
  return ServeBareAsync(socket, "ping", false, nullptr, [](BareCall* c) { c->Reply(); });
}

int ServeCallbackPing(const std::string& socket) {
  // Block the stop signals before gRPC starts threads, so sigwait below receives them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // As conclaved's were: every gRPC thread SCHED_BATCH (common/runtime.h). The main thread
  // only waits for the signal below.
  conclave::BeginBackgroundThreads();
  PingService service;
  grpc::ServerBuilder builder;
  Configure(builder, socket);
  builder.RegisterCallbackGenericService(&service);
  auto server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "bench: the callback ping server cannot listen on %s\n", socket.c_str());
    return 1;
  }
  int sig = 0;
  sigwait(&set, &sig);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}

}  // namespace bench
