// Unit tests: waking long-poll waiters (events/event_bus) — waiters are woken by the commits
// that match them and only those, whatever they filter on; the index means a publish checks
// only waiters it could wake.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "events/event_bus.h"
#include "../store/temp_db.h"

namespace conclave {
namespace {
using testing::Msg;

TEST_CASE("event bus: waiters wake on matching commits only, and time out with nothing",
          "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  std::vector<domain::MessageRecord> got;
  bool timed_out = false;
  domain::MessageFilter f;
  f.to = "x";
  bus.AddWaiter(f, 5, std::chrono::milliseconds(10000), 10,
                [&](std::vector<domain::MessageRecord> ms) { got = std::move(ms); });
  bus.AddWaiter(f, 0, std::chrono::milliseconds(1), 10,
                [&](std::vector<domain::MessageRecord> ms) { timed_out = ms.empty(); });
  while (!timed_out) io.run_one();  // the 1 ms waiter expires; the other stays
  CHECK(bus.waiter_count() == 1);
  auto old = Msg("x", "status");
  old.seq = 5;  // not after the cursor
  auto other = Msg("y", "status");
  other.seq = 6;
  auto hit = Msg("x", "status");
  hit.seq = 7;
  bus.Publish({old, other});
  CHECK(got.empty());
  bus.Publish({hit});
  REQUIRE(got.size() == 1);
  CHECK(got[0].seq == 7);
  CHECK(bus.waiter_count() == 0);
  CHECK(bus.last_seq() == 7);
}

}  // namespace
}  // namespace conclave

using namespace conclave;
using Records = std::vector<domain::MessageRecord>;

namespace {

domain::MessageRecord M(int64_t seq, const std::string& to, const std::string& type,
                        int64_t task = 0, const std::string& from = "coordinator") {
  domain::MessageRecord m;
  m.seq = seq;
  m.to = to;
  m.type = type;
  m.task_id = task;
  m.from = from;
  return m;
}

std::vector<int64_t> Seqs(const Records& ms) {
  std::vector<int64_t> out;
  for (const auto& m : ms) out.push_back(m.seq);
  return out;
}

struct Probe {
  bool called = false;
  Records got;
  events::EventBus::WaitCallback Cb() {
    return [this](Records ms) {
      called = true;
      got = std::move(ms);
    };
  }
};

constexpr auto kLong = std::chrono::milliseconds(60000);

}  // namespace

TEST_CASE("event bus: each kind of filter wakes on its match and nothing else", "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  domain::MessageFilter by_task, by_to, by_type, by_from, by_all, combined;
  by_task.task_ids = {7, 9};
  by_to.to = "x";
  by_type.types = {"escalation", "question"};
  by_from.from = "w1";
  combined.to = "x";
  combined.types = {"worker_done"};
  combined.task_ids = {9};
  Probe task, to, type, from, all, comb;
  bus.AddWaiter(by_task, 0, kLong, 10, task.Cb());
  bus.AddWaiter(by_to, 0, kLong, 10, to.Cb());
  bus.AddWaiter(by_type, 0, kLong, 10, type.Cb());
  bus.AddWaiter(by_from, 0, kLong, 10, from.Cb());
  bus.AddWaiter(by_all, 0, kLong, 10, all.Cb());
  bus.AddWaiter(combined, 0, kLong, 10, comb.Cb());

  bus.Publish({M(1, "y", "status", 8, "w2")});  // only the unfiltered waiter
  CHECK(all.called);
  CHECK_FALSE((task.called || to.called || type.called || from.called || comb.called));

  bus.Publish({M(2, "x", "status", 9, "w2")});  // to x, task 9; not the worker_done
  CHECK(task.called);
  CHECK(Seqs(task.got) == std::vector<int64_t>{2});
  CHECK(to.called);
  CHECK_FALSE((type.called || from.called || comb.called));

  bus.Publish({M(3, "z", "question", 0, "w1")});  // type and sender
  CHECK(type.called);
  CHECK(from.called);
  CHECK_FALSE(comb.called);

  bus.Publish({M(4, "x", "worker_done", 9, "w1")});  // every field of the combined filter
  CHECK(comb.called);
  CHECK(Seqs(comb.got) == std::vector<int64_t>{4});
  CHECK(bus.waiter_count() == 0);
}

TEST_CASE("event bus: a waiter gets its matches of one commit in order, up to its limit, once",
          "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  domain::MessageFilter f;
  f.task_ids = {1, 2, 3};
  f.types = {"status", "reply"};
  Probe p, limited;
  int calls = 0;
  bus.AddWaiter(f, 10, kLong, 10, [&](Records ms) {
    ++calls;
    p.got = std::move(ms);
  });
  bus.AddWaiter(f, 10, kLong, 2, limited.Cb());
  bus.Publish({M(10, "a", "status", 1), M(11, "a", "heartbeat", 2), M(12, "a", "reply", 3),
               M(13, "a", "status", 4), M(14, "b", "status", 2), M(15, "a", "reply", 1)});
  CHECK(calls == 1);
  CHECK(Seqs(p.got) == std::vector<int64_t>{12, 14, 15});  // not 10: at the cursor
  CHECK(Seqs(limited.got) == std::vector<int64_t>{12, 14});
  bus.Publish({M(16, "a", "status", 1)});
  CHECK(calls == 1);
}

TEST_CASE("event bus: a publish checks only the waiters it could wake", "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  std::vector<Probe> parked(3000);
  for (size_t i = 0; i < parked.size(); ++i) {
    domain::MessageFilter f;
    if (i % 3 == 0) f.to = "idle-" + std::to_string(i);
    if (i % 3 == 1) f.task_ids = {static_cast<int64_t>(100000 + i)};
    if (i % 3 == 2) f.types = {"escalation"};
    bus.AddWaiter(f, 0, kLong, 10, parked[i].Cb());
  }
  domain::MessageFilter mine;
  mine.to = "me";
  Probe me;
  bus.AddWaiter(mine, 0, kLong, 10, me.Cb());
  uint64_t before = bus.FilterChecksForTest();
  bus.Publish({M(1, "me", "status", 5)});
  CHECK(me.called);
  CHECK(bus.FilterChecksForTest() - before == 1);  // not 3001
  for (const auto& p : parked) CHECK_FALSE(p.called);
  CHECK(bus.waiter_count() == parked.size());
  bus.Publish({M(2, "someone", "escalation", 0)});
  CHECK(bus.waiter_count() == parked.size() - 1000);  // every type waiter woke
}

TEST_CASE("event bus: cancel, timeout and shutdown leave no waiter behind", "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  domain::MessageFilter f;
  f.to = "x";
  Probe cancelled, timed, expired;
  auto id = bus.AddWaiter(f, 0, kLong, 10, cancelled.Cb());
  bus.CancelWaiter(id);
  bus.CancelWaiter(id);  // unknown ids are fine
  bus.AddWaiter(f, 0, std::chrono::milliseconds(1), 10, timed.Cb());
  while (!timed.called) io.run_one();
  CHECK(timed.got.empty());
  CHECK(bus.waiter_count() == 0);
  bus.Publish({M(1, "x", "status")});
  CHECK_FALSE(cancelled.called);

  domain::MessageFilter g;
  g.task_ids = {4};
  bus.AddWaiter(g, 0, kLong, 10, expired.Cb());
  bus.ExpireAll();
  CHECK(expired.called);
  CHECK(expired.got.empty());
  CHECK(bus.waiter_count() == 0);
  bus.Publish({M(2, "x", "status", 4)});  // nothing left to wake; buckets are consistent
  CHECK(bus.waiter_count() == 0);
}

TEST_CASE("event bus: a callback may park a new waiter, which waits for the next commit",
          "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  domain::MessageFilter f;
  f.to = "x";
  Probe second;
  bool first = false;
  bus.AddWaiter(f, 0, kLong, 10, [&](Records) {
    first = true;
    bus.AddWaiter(f, 1, kLong, 10, second.Cb());
  });
  bus.Publish({M(1, "x", "status")});
  CHECK(first);
  CHECK_FALSE(second.called);
  bus.Publish({M(2, "x", "status")});
  CHECK(Seqs(second.got) == std::vector<int64_t>{2});
}

TEST_CASE("event bus: watchers see every match once, in order, until they unsubscribe",
          "[events]") {
  boost::asio::io_context io;
  events::EventBus bus(io);
  domain::MessageFilter f;
  f.types = {"status"};
  std::vector<int64_t> seen;
  bus.AddWatcher(f, 1, [&](const domain::MessageRecord& m) {
    seen.push_back(m.seq);
    return seen.size() < 3;
  });
  bus.Publish({M(1, "a", "status"), M(2, "a", "status"), M(3, "a", "reply")});
  bus.Publish({M(4, "a", "status"), M(5, "a", "status")});
  CHECK(seen == std::vector<int64_t>{2, 4, 5});
  CHECK(bus.watcher_count() == 0);
}
