// The queue loop's unit tests' fixture (queue_loop_test.cpp, queue_loop_poll_test.cpp): a real
// gRPC server whose completion queue the loop polls, calls to request on it, and the loop run on
// the test's thread while another pokes it. Each wait is capped at 20 s and counted: a wake that
// did not come shows as a wait that ran into the cap, and fails the case, rather than as a hang.
#pragma once

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "api/async_calls.h"
#include "api/queue_loop.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace conclave::api {

inline constexpr std::chrono::seconds kCap{20};

namespace health = grpc::health::v1;

// A gRPC server whose completion queue is polled (no thread of its own); with a service, its
// methods are async (requested on the queue).
struct PolledServer {
  explicit PolledServer(grpc::Service* service = nullptr,
                        grpc::AsyncGenericService* generic = nullptr) {
    grpc::ServerBuilder builder;
    if (service) builder.RegisterService(service);
    if (generic) builder.RegisterAsyncGenericService(generic);
    queue = std::make_unique<CallQueue>(builder.AddCompletionQueue());
    server = builder.BuildAndStart();
    REQUIRE(server);
    queue->Start({}, /*polled=*/true);
  }
  // From any thread but a polling one: the server, then the queue (the loop drains it).
  void Shutdown() {
    server->Shutdown();
    queue->Stop();
  }
  std::unique_ptr<CallQueue> queue;  // outlives the server
  std::unique_ptr<grpc::Server> server;
};

// One requested Health.Check: what its request's completion was.
struct CheckMethod {
  health::Health::AsyncService* service;
  bool* ended;
  bool* ok;
};
// What the fixture's calls share: their queue, and their end (deleted, then counted as ended).
class FixtureCall : public QueuedCall {
 protected:
  explicit FixtureCall(CallQueue* queue) : queue_(queue) {}
  void End() {
    CallQueue* queue = queue_;
    delete this;
    queue->Ended();
  }
  CallQueue* const queue_;
};

class RequestedCheck final : public FixtureCall {
 public:
  RequestedCheck(CallQueue* queue, const CheckMethod* m) : FixtureCall(queue), m_(m) {}
  void Request() {
    m_->service->RequestCheck(&ctx_, &req_, &writer_, queue_->cq(), queue_->cq(), &tag_);
  }
  void Proceed(CallOp, bool ok) override {
    *m_->ended = true;
    *m_->ok = ok;
    End();
  }
  grpc::ServerContextBase* context() override { return &ctx_; }

 private:
  const CheckMethod* m_;
  grpc::ServerContext ctx_;
  health::HealthCheckRequest req_;
  grpc::ServerAsyncResponseWriter<health::HealthCheckResponse> writer_{&ctx_};
  CallTag tag_{this, CallOp::kRequest};
};

// Any method of a generic service, answered with its own request: read, then written back
// with OK. Counts the calls it finished.
struct EchoMethod {
  grpc::AsyncGenericService* service;
  int* finished;  // on the loop's thread only
};
class EchoCall final : public FixtureCall {
 public:
  EchoCall(CallQueue* queue, const EchoMethod* m) : FixtureCall(queue), m_(m) {}
  void Request() {
    m_->service->RequestCall(&ctx_, &stream_, queue_->cq(), queue_->cq(), &request_);
  }
  void Proceed(CallOp op, bool ok) override {
    if (op == CallOp::kRequest && ok) {
      queue_->Next<EchoCall>(m_);
      stream_.Read(&bytes_, &read_);
      return;
    }
    if (op == CallOp::kWrite && ok) {  // the read
      stream_.WriteAndFinish(bytes_, grpc::WriteOptions(), grpc::Status::OK, &finish_);
      return;
    }
    if (op == CallOp::kFinish && ok) ++*m_->finished;
    if (op == CallOp::kWrite) {  // the client went away before its request was read
      stream_.Finish(grpc::Status::CANCELLED, &finish_);
      return;
    }
    End();
  }
  grpc::ServerContextBase* context() override { return &ctx_; }

 private:
  const EchoMethod* m_;
  grpc::GenericServerContext ctx_;
  grpc::GenericServerAsyncReaderWriter stream_{&ctx_};
  grpc::ByteBuffer bytes_;
  CallTag request_{this, CallOp::kRequest};
  CallTag read_{this, CallOp::kWrite};
  CallTag finish_{this, CallOp::kFinish};
};

// A polled server whose every method echoes its request (EchoCall), its first call requested.
struct EchoServer {
  EchoServer() { server.queue->Next<EchoCall>(&echo); }
  grpc::AsyncGenericService generic;
  int finished = 0;  // calls answered, on the loop's thread only
  const EchoMethod echo{&generic, &finished};
  PolledServer server{nullptr, &generic};
};

// One Health.Check through stub, answered by an EchoServer: true if it was answered OK.
inline bool CallEcho(health::Health::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  health::HealthCheckResponse resp;
  return stub.Check(&ctx, health::HealthCheckRequest(), &resp).ok();
}

struct Loop {
  // poll: the loop's poll_max (0: it sleeps at once whenever it is idle).
  explicit Loop(std::chrono::microseconds poll = std::chrono::microseconds(0))
      : fd(QueueLoop::FindReactorFd(io, &why)), loop(io, fd, kCap, poll) {
    INFO(why);
    REQUIRE(fd >= 0);
    INFO(loop.why());
    REQUIRE(loop.ok());
  }
  // Off the loop's thread: true once the loop has begun its n-th wait in the queue; false if it
  // has not within a minute (a loop that never waits: the case fails instead of hanging).
  bool AwaitWait(int64_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (loop.waits() < n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
  boost::asio::io_context io;
  std::string why;
  int fd;
  QueueLoop loop;
};

// Runs the loop on this thread; once it waits in the queue, `poke` runs on another thread and
// should lead to a handler that shuts the server down. What the handler saw is checked by the
// caller.
template <class Poke>
void RunUntil(Loop& l, PolledServer& s, Poke poke) {
  bool waited = true;
  std::thread poker([&] {
    waited = l.AwaitWait(1);
    if (waited) {
      poke();
    } else {
      s.Shutdown();
    }
  });
  l.loop.Run(*s.queue);
  poker.join();
  REQUIRE(waited);
}

}  // namespace conclave::api
