// The bare baseline servers: the same gRPC build as conclaved on a unix socket, with the same
// message size limits and the daemon's runtime settings (common/runtime.h, applied by bench's
// main), answering any unary method with an empty message: no proto library of their own, no
// work. Each runs in a child process so its CPU can be read from /proc like the daemon's.
//   `bench --serve-ping S`           the baseline of every RPC ratio: gRPC's async API with one
//                                    completion-queue thread that answers each call itself
//                                    (conclaved's API style since a93661fc, without its loop);
//   `bench --serve-callback-ping S`  the ping server of the bench until then: gRPC's callback
//                                    API (conclaved's style until a93661fc), for `--only api`;
//   `bench --serve-spin-ping S`      the first, but each call burns on-CPU time first: its request
//                                    parsed as a SendRequest whose body is the µs (the unary
//                                    section's ping server as costly as GetStatus).
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "bench_support.h"
#include "common/poll_window.h"
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
                   boost::asio::io_context* loop, const std::function<void(BareCall*)>& handle,
                   bool one_thread, std::chrono::microseconds poll_max) {
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
  // One completion: the call's next step. A read request goes to `handle`: posted to the loop,
  // or run here (no loop, or the loop run on this thread).
  auto proceed = [&](void* tag, bool ok, bool post) {
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
        } else if (post) {
          boost::asio::post(*loop, [c, &handle] { handle(c); });
        } else {
          handle(c);
        }
        break;
      case BareCall::kFinishing:
        delete c;
        break;
    }
  };
  if (loop && one_thread) {
    conclave::EndBackgroundThreads();
    // The queue and the loop on this one thread: every completion ready now is handled first;
    // once two polls in a row found none, the loop runs what it holds (a batch's commit, the
    // replies finished after it), and only when it holds nothing does the thread wait for the
    // next completion. Two, not one: gRPC's poller (epoll1) handles one ready connection a
    // poll, and a poll whose connection completed no call (its bytes most likely a window
    // update or part of a request) finds nothing while other requests wait; after one such poll
    // the 16-client Sends each had a commit of their own (1.00 a commit against the two-thread
    // server's 3.07), after two they share them as there (2.6-3.4 against 2.9-3.0). Its waits
    // end every 20 ms, so once the queue is idle nothing the loop holds waits longer (the
    // store's timers). A steady stream of completions would hold the loop back; the bench's
    // clients, each waiting for its reply, make none.
    constexpr int kEmptyPolls = 2;
    auto work = boost::asio::make_work_guard(*loop);
    request_next();
    void* tag = nullptr;
    bool ok = false;
    int empty = 0;
    for (;;) {
      auto got = cq->AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC));
      if (got == grpc::CompletionQueue::TIMEOUT && ++empty >= kEmptyPolls) {
        empty = 0;
        if (loop->poll() == 0) {
          got = cq->AsyncNext(&tag, &ok,
                              std::chrono::system_clock::now() + std::chrono::milliseconds(20));
        }
      }
      if (got == grpc::CompletionQueue::SHUTDOWN) break;
      if (got == grpc::CompletionQueue::GOT_EVENT) {
        empty = 0;
        proceed(tag, ok, false);
      }
    }
    return 0;
  }
  std::thread poller([&] {
    pthread_setname_np(pthread_self(), "grpc-queue");  // as conclaved's (api/async_calls)
    conclave::EndBackgroundThreads();
    request_next();
    void* tag = nullptr;
    bool ok = false;
    if (poll_max.count() == 0 || loop) {
      while (cq->Next(&tag, &ok)) proceed(tag, ok, loop != nullptr);
      return;
    }
    // As conclaved's loop: what is ready first; then, idle, a poll of the window before a sleep
    // (idle after one empty poll: it has no Asio to turn, where the loop has two and a turn).
    conclave::PollWindow window(poll_max);
    const gpr_timespec now = gpr_time_0(GPR_CLOCK_MONOTONIC);
    for (;;) {
      auto got = cq->AsyncNext(&tag, &ok, now);
      if (got == grpc::CompletionQueue::TIMEOUT) {
        const auto from = std::chrono::steady_clock::now();
        const auto until = from + window.window();
        bool caught = false;
        if (window.window().count() > 0) {
          using Clock = std::chrono::steady_clock;
          do {
            sched_yield();
            got = cq->AsyncNext(&tag, &ok, now);
          } while (got == grpc::CompletionQueue::TIMEOUT && Clock::now() < until);
          caught = got != grpc::CompletionQueue::TIMEOUT;
        }
        if (!caught) got = cq->AsyncNext(&tag, &ok, gpr_inf_future(GPR_CLOCK_MONOTONIC));
        using Ended = conclave::PollWindow::Ended;
        Ended how = Ended::kOther;
        if (caught) {
          how = Ended::kPolling;
        } else if (got == grpc::CompletionQueue::GOT_EVENT) {
          how = Ended::kCall;
        }
        window.Idled(std::chrono::steady_clock::now() - from, how);
      }
      if (got == grpc::CompletionQueue::SHUTDOWN) return;
      if (got == grpc::CompletionQueue::GOT_EVENT) proceed(tag, ok, false);
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

int ServePollingPing(const std::string& socket) {
  return ServeBareAsync(
      socket, "polling ping", false, nullptr, [](BareCall* c) { c->Reply(); }, false,
      kPollingPingMax);
}

int ServeSpinPing(const std::string& socket) {
  return ServeBareAsync(socket, "spinning ping", false, nullptr, [](BareCall* c) {
    conclave::v1::SendRequest req;
    grpc::ByteBuffer bytes(c->request());
    double spin_us = 0;
    if (grpc::GenericDeserialize<grpc::ProtoBufferReader, conclave::v1::SendRequest>(&bytes, &req)
            .ok()) {
      spin_us = std::atof(req.body().c_str());
    }
    timespec t0{}, t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) / 1e3 < spin_us);
    c->Reply();
  });
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
