// Unit tests: waking long-poll waiters (events/event_bus).
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
