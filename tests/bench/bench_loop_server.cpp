// The bare loop server: the structure DESIGN.md prescribes for conclaved, with nothing else in
// it. gRPC callback reactors (the same build and settings as the ping server) post every call
// into one Boost.Asio io_context on the main thread, SCHED_OTHER like conclaved's loop, and
// each reply is finished from there. No store, no checks, no request parsed:
//   - `Wait` parks (it is answered by the next `Send`),
//   - `Send` answers every parked `Wait`, then itself, with an empty message,
//   - `GetStatus` answers a StatusReply whose counts["waiters"] is the number parked (what
//     the bench's wake client polls to know its Wait is parked),
//   - any other method answers an empty message.
// So a round trip through it is a ping plus the hop to the loop and the reply finished from
// the loop, and a wake through it is what a Send → Wait wake costs in that structure before
// the daemon stores or checks anything. `bench --serve-loop SOCKET` runs it in a child process.
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <cstdio>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "common/runtime.h"

namespace bench {
namespace {

class LoopServer;

class LoopReactor final : public grpc::ServerGenericBidiReactor {
 public:
  LoopReactor(LoopServer* server, std::string method)
      : server_(server), method_(std::move(method)) {
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override;
  void OnDone() override { delete this; }
  // On the loop: answers with an empty message and ends the call.
  void Reply() { StartWriteAndFinish(&empty_reply_, grpc::WriteOptions(), grpc::Status::OK); }
  // On the loop: answers with `reply` and ends the call.
  void Reply(grpc::ByteBuffer reply) {
    reply_ = std::move(reply);
    StartWriteAndFinish(&reply_, grpc::WriteOptions(), grpc::Status::OK);
  }
  const std::string& method() const { return method_; }

 private:
  LoopServer* server_;
  grpc::Slice empty_{""};
  grpc::ByteBuffer empty_reply_{&empty_, 1};
  std::string method_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer reply_;
};

class LoopServer final : public grpc::CallbackGenericService {
 public:
  explicit LoopServer(boost::asio::io_context& io) : io_(io) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new LoopReactor(this, ctx->method());
  }
  // From a gRPC thread: the call goes to the loop, as conclaved's do.
  void Post(LoopReactor* r) {
    boost::asio::post(io_, [this, r] { Handle(r); });
  }
  // On the loop: answers every parked Wait (for a Send, and at shutdown).
  void ReleaseParked() {
    for (LoopReactor* w : parked_) w->Reply();
    parked_.clear();
  }
  // On the loop: from now on a Wait is answered at once instead of parked.
  void Stop() {
    stopping_ = true;
    ReleaseParked();
  }

 private:
  static bool EndsWith(const std::string& s, const char* tail) {
    std::string t(tail);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
  }
  void Handle(LoopReactor* r) {
    const std::string& m = r->method();
    if (EndsWith(m, "/Wait") && !stopping_) {
      parked_.push_back(r);
    } else if (EndsWith(m, "/Send")) {
      ReleaseParked();
      r->Reply();
    } else if (EndsWith(m, "/GetStatus")) {
      v1::StatusReply status;
      (*status.mutable_counts())["waiters"] = static_cast<int64_t>(parked_.size());
      std::string bytes = status.SerializeAsString();
      grpc::Slice slice(bytes);
      r->Reply(grpc::ByteBuffer(&slice, 1));
    } else {
      r->Reply();
    }
  }

  boost::asio::io_context& io_;
  std::vector<LoopReactor*> parked_;
  bool stopping_ = false;
};

void LoopReactor::OnReadDone(bool ok) {
  if (!ok) {
    Finish(grpc::Status::OK);
    return;
  }
  server_->Post(this);
}

}  // namespace

int ServeLoop(const std::string& socket) {
  unlink(socket.c_str());
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  // As conclaved's: gRPC's threads SCHED_BATCH, the loop SCHED_OTHER (common/runtime.h).
  conclave::BeginBackgroundThreads();
  LoopServer service(io);
  auto server = StartBareServer(socket, &service, "loop");
  if (!server) return 1;
  std::thread shutdown;
  signals.async_wait([&](const boost::system::error_code& e, int) {
    if (e) return;
    service.Stop();
    // Shutdown() waits for calls that finish on this loop: call it from elsewhere.
    shutdown = std::thread([&] {
      server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
      boost::asio::post(io, [&] { io.stop(); });
    });
  });
  conclave::EndBackgroundThreads();
  io.run();
  if (shutdown.joinable()) shutdown.join();
  return 0;
}

}  // namespace bench
