// Unit tests: the loop's poll of the queue before it sleeps (api/queue_loop, with
// common/poll_window and common/recent_callers): calls from a client that waits for each reply
// make it poll, and nothing else does: not posts, not a closed gate, not many connections.
#include <sys/socket.h>
#include <unistd.h>

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
namespace {

// A client with a connection of its own, as conclaved's unix listener hands each accepted one
// to gRPC (AddInsecureChannelFromFd): the server sees it as a peer of its own ("fd:N").
std::unique_ptr<health::Health::Stub> OwnConnection(grpc::Server* server) {
  int fds[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
  grpc::AddInsecureChannelFromFd(server, fds[0]);
  return health::Health::NewStub(grpc::CreateInsecureChannelFromFd("", fds[1]));
}

}  // namespace

TEST_CASE("a loop that polls before it sleeps serves calls and posts from its poll then sleeps",
          "[queue_loop]") {
  // A client calls a method of the loop's server one call after another (in process): each
  // call that ends a spell the loop slept through soon after its last reply makes it poll
  // before the next, and a call made while it polls is served from that poll. Then a post made
  // while it polls is run with no sleep between, and once nothing comes it must sleep in the
  // queue again (its poll of up to 1 ms finds nothing); nothing may wait for the cap. Each wait
  // for the loop gives up after a minute: the case fails, not hangs.
  Loop l(std::chrono::microseconds(1000));
  EchoServer e;
  PolledServer& s = e.server;
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
      ++calls;
      answered += CallEcho(*stub);
    }
    caught_by_calls = l.loop.caught();
    // A post made while the loop polls after a call's reply (a call just answered earned it
    // credit): tried until one is caught, as the poll may end before this thread posts.
    for (int i = 0; i < 1000 && !stuck && !posted_while_polling; ++i) {
      const int64_t polls = l.loop.polls(), waits = l.loop.waits();
      ++calls;
      answered += CallEcho(*stub);
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
  CHECK(e.finished == calls);
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
  EchoServer e;
  PolledServer& s = e.server;
  auto stub = health::Health::NewStub(s.server->InProcessChannel(grpc::ChannelArguments()));
  int answered = 0;
  RunUntil(l, s, [&] {
    for (int i = 0; i < 300; ++i) answered += CallEcho(*stub);
    s.Shutdown();
  });
  CHECK(answered == 300);
  CHECK(e.finished == 300);
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

TEST_CASE("calls on two connections in turn make the loop poll and on three they do not",
          "[queue_loop]") {
  // Two clients in turn, each on its connection (a client and a waiter): the loop polls. A
  // third joins them: once the loop has heard from it, the last 16 requests came on three
  // connections, and it sleeps whenever it is idle. Then one calls on alone: once the others
  // have dropped out of the last 16 it polls again. Each wait for a poll gives up (the case
  // fails) after 10,000 calls.
  Loop l(std::chrono::microseconds(1000));
  EchoServer e;
  PolledServer& s = e.server;
  std::vector<std::unique_ptr<health::Health::Stub>> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(OwnConnection(s.server.get()));
  int calls = 0, answered = 0;
  int64_t polls_by_two = -1, polls_before = -1, polls_by_three = -1, polls_alone = -1;
  RunUntil(l, s, [&] {
    auto call = [&](health::Health::Stub& stub) {
      ++calls;
      answered += CallEcho(stub);
    };
    call(*clients[0]);
    call(*clients[1]);
    const int64_t heard_two = l.loop.polls();  // from here the last 16 came on both
    for (int i = 0; i < 10000 && l.loop.polls() == heard_two; ++i) call(*clients[i % 2]);
    polls_by_two = l.loop.polls() - heard_two;
    call(*clients[2]);  // its request is heard before its reply comes back
    polls_before = l.loop.polls();
    for (int i = 0; i < 400; ++i) call(*clients[i % 3]);
    polls_by_three = l.loop.polls();
    for (int i = 0; i < 10000 && l.loop.polls() == polls_by_three; ++i) call(*clients[0]);
    polls_alone = l.loop.polls() - polls_by_three;
    s.Shutdown();
  });
  CHECK(answered == calls);
  CHECK(e.finished == calls);
  CHECK(polls_by_two > 0);
  CHECK(polls_by_three == polls_before);
  CHECK(polls_alone > 0);
  CHECK(l.loop.capped_waits() == 0);
}

}  // namespace conclave::api
