// Unit tests: the loop that polls gRPC's completion queue itself (api/queue_loop) is woken,
// while it waits in the queue, by everything Asio has for it: a post from another thread
// (PostToLoop, common/loop_kick), a timer, a descriptor turning readable, a signal. Each wait
// is capped at 20 s here and counted: a wake that did not come shows as a wait that ran into
// the cap, and fails the case, rather than as a hang. A real gRPC server owns the queue.
#include <signal.h>
#include <unistd.h>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "api/async_calls.h"
#include "api/queue_loop.h"
#include "common/loop_kick.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace conclave::api {
namespace {

constexpr std::chrono::seconds kCap{20};

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
class RequestedCheck final : public QueuedCall {
 public:
  RequestedCheck(CallQueue* queue, const CheckMethod* m) : queue_(queue), m_(m), writer_(&ctx_) {}
  void Request() {
    m_->service->RequestCheck(&ctx_, &req_, &writer_, queue_->cq(), queue_->cq(), &tag_);
  }
  void Proceed(CallOp, bool ok) override {
    *m_->ended = true;
    *m_->ok = ok;
    CallQueue* queue = queue_;
    delete this;
    queue->Ended();
  }

 private:
  CallQueue* queue_;
  const CheckMethod* m_;
  grpc::ServerContext ctx_;
  health::HealthCheckRequest req_;
  grpc::ServerAsyncResponseWriter<health::HealthCheckResponse> writer_;
  CallTag tag_{this, CallOp::kRequest};
};

// Any method of a generic service, answered with its own request: read, then written back
// with OK. Counts the calls it finished.
struct EchoMethod {
  grpc::AsyncGenericService* service;
  int* finished;  // on the loop's thread only
};
class EchoCall final : public QueuedCall {
 public:
  EchoCall(CallQueue* queue, const EchoMethod* m) : queue_(queue), m_(m) {}
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
    CallQueue* queue = queue_;
    delete this;
    queue->Ended();
  }

 private:
  CallQueue* queue_;
  const EchoMethod* m_;
  grpc::GenericServerContext ctx_;
  grpc::GenericServerAsyncReaderWriter stream_{&ctx_};
  grpc::ByteBuffer bytes_;
  CallTag request_{this, CallOp::kRequest};
  CallTag read_{this, CallOp::kWrite};
  CallTag finish_{this, CallOp::kFinish};
};

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

}  // namespace

TEST_CASE("the queue loop finds each io_context's own reactor descriptor", "[queue_loop]") {
  boost::asio::io_context a, b;
  std::string why_a, why_b;
  const int fa = QueueLoop::FindReactorFd(a, &why_a);
  const int fb = QueueLoop::FindReactorFd(b, &why_b);
  INFO(why_a << why_b);
  CHECK(fa >= 0);
  CHECK(fb >= 0);
  CHECK(fa != fb);
  CHECK(QueueLoop::FindReactorFd(a, &why_a) == fa);
}

TEST_CASE("a post from another thread wakes the loop waiting in the queue", "[queue_loop]") {
  Loop l;
  PolledServer s;
  std::thread stopper;
  std::thread::id ran_on;
  int64_t capped_then = -1;
  RunUntil(l, s, [&] {
    PostToLoop(l.io, [&] {
      ran_on = std::this_thread::get_id();
      capped_then = l.loop.capped_waits();
      stopper = std::thread([&] { s.Shutdown(); });
    });
  });
  stopper.join();
  CHECK(ran_on == std::this_thread::get_id());
  CHECK(capped_then == 0);
  CHECK(l.loop.late_handlers() == 0);
}

TEST_CASE("a loop that polls before it sleeps serves calls and posts from its poll then sleeps",
          "[queue_loop]") {
  // A client calls a method of the loop's server one call after another (in process): each
  // call that ends a spell the loop slept through soon after its last reply makes it poll
  // before the next, and a call made while it polls is served from that poll. Then a post made
  // while it polls is run with no sleep between, and once nothing comes it must sleep in the
  // queue again (its poll of up to 1 ms finds nothing); nothing may wait for the cap. Each wait
  // for the loop gives up after a minute: the case fails, not hangs.
  Loop l(std::chrono::microseconds(1000));
  grpc::AsyncGenericService generic;
  int finished = 0;
  const EchoMethod echo{&generic, &finished};
  PolledServer s(nullptr, &generic);
  s.queue->Next<EchoCall>(&echo);
  auto stub = health::Health::NewStub(s.server->InProcessChannel(grpc::ChannelArguments()));
  int calls = 0, answered = 0;
  int64_t caught_by_calls = 0;
  std::atomic<bool> ran{false};
  std::atomic<int64_t> waits_at_run{0};
  bool stuck = false, slept_again = false, posted_while_polling = false;
  RunUntil(l, s, [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    auto await = [&](const std::function<bool()>& done) {
      while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
      }
      return true;
    };
    while (l.loop.caught() == 0 && calls < 10000) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      health::HealthCheckRequest req;
      req.set_service("echo");
      health::HealthCheckResponse resp;
      ++calls;
      answered += stub->Check(&ctx, req, &resp).ok();
    }
    caught_by_calls = l.loop.caught();
    // A post made while the loop polls after a call's reply (a call just answered earned it
    // credit): tried until one is caught, as the poll may end before this thread posts.
    for (int i = 0; i < 1000 && !stuck && !posted_while_polling; ++i) {
      const int64_t polls = l.loop.polls(), waits = l.loop.waits();
      grpc::ClientContext ctx;
      health::HealthCheckResponse resp;
      ++calls;
      answered += stub->Check(&ctx, health::HealthCheckRequest(), &resp).ok();
      // Its next spell begins after the reply: a poll, or (no credit left) a wait.
      stuck = !await([&] { return l.loop.polls() > polls || l.loop.waits() > waits; });
      if (stuck || l.loop.waits() > waits) continue;
      ran = false;
      PostToLoop(l.io, [&] {
        waits_at_run = l.loop.waits();  // on the loop, before its next spell
        ran = true;
      });
      stuck = !await([&] { return ran.load(); });
      posted_while_polling = !stuck && waits_at_run == waits;  // run with no sleep since
    }
    slept_again = !stuck && await([&] { return l.loop.waits() > waits_at_run; });
    s.Shutdown();
  });
  CHECK_FALSE(stuck);
  CHECK(answered == calls);
  CHECK(finished == calls);
  CHECK(caught_by_calls >= 1);
  CHECK(posted_while_polling);
  CHECK(slept_again);
  CHECK(l.loop.capped_waits() == 0);
  CHECK(l.loop.late_handlers() == 0);
}

TEST_CASE("a closed poll gate keeps the loop from polling however calls come", "[queue_loop]") {
  // conclaved's gate is closed while it runs workers or commands.
  Loop l(std::chrono::microseconds(1000));
  l.loop.SetPollGate([] { return false; });
  grpc::AsyncGenericService generic;
  int finished = 0;
  const EchoMethod echo{&generic, &finished};
  PolledServer s(nullptr, &generic);
  s.queue->Next<EchoCall>(&echo);
  auto stub = health::Health::NewStub(s.server->InProcessChannel(grpc::ChannelArguments()));
  int answered = 0;
  RunUntil(l, s, [&] {
    for (int i = 0; i < 300; ++i) {
      grpc::ClientContext ctx;
      health::HealthCheckResponse resp;
      answered += stub->Check(&ctx, health::HealthCheckRequest(), &resp).ok();
    }
    s.Shutdown();
  });
  CHECK(answered == 300);
  CHECK(finished == 300);
  CHECK(l.loop.polls() == 0);
}

TEST_CASE("posts alone never make the loop poll before it sleeps", "[queue_loop]") {
  // What the loop's own work brings (here a post from another thread, as a helper's result
  // comes) ends a spell however the loop waits: it earns no polling.
  Loop l(std::chrono::microseconds(1000));
  PolledServer s;
  std::atomic<int> ran{0};
  bool stuck = false;
  RunUntil(l, s, [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (int i = 0; i < 200 && !stuck; ++i) {
      const int64_t waits = l.loop.waits();
      PostToLoop(l.io, [&] { ++ran; });
      // Run, and the loop asleep again.
      while (ran <= i || l.loop.waits() == waits) {
        if (std::chrono::steady_clock::now() > deadline) {
          stuck = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    s.Shutdown();
  });
  CHECK_FALSE(stuck);
  CHECK(ran == 200);
  CHECK(l.loop.polls() == 0);
  CHECK(l.loop.capped_waits() == 0);
}

TEST_CASE("timers one after another wake the loop waiting in the queue", "[queue_loop]") {
  // Each wake re-arms the watcher (EPOLLONESHOT) after the loop's next poll of Asio: a watcher
  // that fired once and was never re-armed would leave the second timer to the cap.
  Loop l;
  PolledServer s;
  std::thread stopper;
  std::vector<int64_t> waits_then, capped_then;
  boost::asio::steady_timer timer(l.io);
  std::function<void(const boost::system::error_code&)> fired =
      [&](const boost::system::error_code& e) {
        CHECK(!e);
        waits_then.push_back(l.loop.waits());
        capped_then.push_back(l.loop.capped_waits());
        if (waits_then.size() == 3) {
          stopper = std::thread([&] { s.Shutdown(); });
          return;
        }
        timer.expires_after(std::chrono::milliseconds(100));
        timer.async_wait(fired);
      };
  // The first is armed once the loop waits, from a post, so it too fires while the loop waits.
  RunUntil(l, s, [&] {
    PostToLoop(l.io, [&] {
      timer.expires_after(std::chrono::milliseconds(100));
      timer.async_wait(fired);
    });
  });
  stopper.join();
  REQUIRE(waits_then.size() == 3);
  CHECK(waits_then[0] >= 1);  // the loop waited in the queue before the first fired
  // Each was woken for, not found when the cap ended a wait.
  CHECK(capped_then == std::vector<int64_t>{0, 0, 0});
}

TEST_CASE("posts from many threads at once all run and none waits for the cap",
          "[queue_loop]") {
  // Kicks race each other, the wake's delivery and the loop's own turns: none may be lost.
  Loop l;
  PolledServer s;
  constexpr int kThreads = 4, kEach = 2000;
  int ran = 0;  // on the loop only
  std::thread stopper;
  int64_t capped_then = -1;
  RunUntil(l, s, [&] {
    std::vector<std::thread> posters;
    for (int t = 0; t < kThreads; ++t) {
      posters.emplace_back([&] {
        for (int i = 0; i < kEach; ++i) {
          PostToLoop(l.io, [&] {
            if (++ran < kThreads * kEach) return;
            capped_then = l.loop.capped_waits();
            stopper = std::thread([&] { s.Shutdown(); });
          });
        }
      });
    }
    for (auto& p : posters) p.join();
  });
  stopper.join();
  CHECK(ran == kThreads * kEach);
  CHECK(capped_then == 0);
  CHECK(l.loop.late_handlers() == 0);
}

TEST_CASE("a descriptor turning readable wakes the loop waiting in the queue", "[queue_loop]") {
  Loop l;
  PolledServer s;
  int p[2];
  REQUIRE(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
  boost::asio::posix::stream_descriptor in(l.io, p[0]);
  char buf[8];
  std::string got;
  std::thread stopper;
  int64_t capped_then = -1;
  in.async_read_some(boost::asio::buffer(buf), [&](const boost::system::error_code& e, size_t n) {
    CHECK(!e);
    got.assign(buf, n);
    capped_then = l.loop.capped_waits();
    stopper = std::thread([&] { s.Shutdown(); });
  });
  ssize_t wrote = 0;
  RunUntil(l, s, [&] { wrote = write(p[1], "exit", 4); });  // no Catch assertion off this thread
  stopper.join();
  CHECK(wrote == 4);
  close(p[1]);
  CHECK(got == "exit");
  CHECK(capped_then == 0);
}

TEST_CASE("a signal wakes the loop waiting in the queue", "[queue_loop]") {
  Loop l;
  PolledServer s;
  boost::asio::signal_set signals(l.io, SIGWINCH);  // ignored by default, should one escape
  int got = 0;
  std::thread stopper;
  int64_t capped_then = -1;
  signals.async_wait([&](const boost::system::error_code& e, int sig) {
    CHECK(!e);
    got = sig;
    capped_then = l.loop.capped_waits();
    stopper = std::thread([&] { s.Shutdown(); });
  });
  int sent = -1;
  RunUntil(l, s, [&] { sent = kill(getpid(), SIGWINCH); });
  stopper.join();
  CHECK(sent == 0);
  CHECK(got == SIGWINCH);
  CHECK(capped_then == 0);
}

TEST_CASE("the queue loop runs Asio on after the queue shut down, until it stops",
          "[queue_loop]") {
  // conclaved's shutdown: the server and the queue stop off the loop, then a post stops the loop.
  Loop l;
  PolledServer s;
  bool flushed = false;
  auto work = boost::asio::make_work_guard(l.io);
  std::thread stopper([&] {
    l.AwaitWait(1);
    s.Shutdown();
    PostToLoop(l.io, [&] {
      flushed = true;
      l.io.stop();
    });
  });
  l.loop.Run(*s.queue);
  stopper.join();
  CHECK(flushed);
  CHECK(l.io.stopped());
}

TEST_CASE("a polled queue the loop never claimed is drained by its Stop", "[queue_loop]") {
  health::Health::AsyncService service;
  bool ended = false, ok = true;
  const CheckMethod check{&service, &ended, &ok};
  PolledServer s(&service);
  s.queue->Next<RequestedCheck>(&check);
  // The requested call comes back not ok once the server shuts down: with no loop polling,
  // Stop delivers it itself before it shuts the queue down, and drains the queue after.
  s.Shutdown();
  CHECK(ended);
  CHECK_FALSE(ok);
  Loop l;
  l.loop.Run(*s.queue);  // the claim fails: Asio alone, which has nothing to do
  CHECK(l.loop.waits() == 0);
}

}  // namespace conclave::api
