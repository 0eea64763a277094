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

#include "queue_loop_fixture.h"
#include "common/loop_kick.h"

namespace conclave::api {

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


TEST_CASE("the queue counts each request it reads and not the one its shutdown ends",
          "[queue_loop]") {
  // The retention pass asks this count whether requests came while it deleted.
  Loop l;
  EchoServer e;
  PolledServer& s = e.server;
  auto stub = health::Health::NewStub(s.server->InProcessChannel(grpc::ChannelArguments()));
  int answered = 0;
  int64_t before = -1, after = -1;
  RunUntil(l, s, [&] {
    before = s.queue->requests();
    for (int i = 0; i < 25; ++i) answered += CallEcho(*stub);
    after = s.queue->requests();
    s.Shutdown();
  });
  CHECK(before == 0);
  CHECK(answered == 25);
  CHECK(after == 25);
  CHECK(s.queue->requests() == 25);  // the call requested last ends unanswered (not ok)
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
