// Unit tests: the store-backed part of GetStatus, read once per change (service/status_reads).
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "service_harness.h"

namespace conclave {
namespace {

int64_t Handles(testing::ServiceHarness& h) { return h.services->Status().counts.at("handles"); }

TEST_CASE("status figures read inside a batch whose COMMIT fails are not kept", "[service][status]") {
  testing::ServiceHarness h;
  auto& core = *h.core;
  const int64_t before = Handles(h);
  REQUIRE(core.batcher.Write([&] {
    core.handles.Insert({"phantom", "handle", 1, false});
    return Status::Ok();
  }).ok());
  CHECK(Handles(h) == before + 1);  // read inside the open batch: it sees the insert
  h.db->SetFaultHookForTest([](std::string_view sql) { return sql == "COMMIT" ? SQLITE_FULL : SQLITE_OK; });
  core.batcher.Flush();  // rolled back
  h.db->SetFaultHookForTest(nullptr);
  CHECK(Handles(h) == before);
}

TEST_CASE("a status whose read transaction fails to end leaves no transaction open",
          "[service][status]") {
  testing::ServiceHarness h;
  auto& core = *h.core;
  REQUIRE(core.batcher.Write([&] {
    core.handles.Insert({"first", "handle", 1, false});
    return Status::Ok();
  }).ok());
  core.batcher.Flush();
  h.db->SetFaultHookForTest([](std::string_view sql) { return sql == "COMMIT" ? SQLITE_IOERR : SQLITE_OK; });
  CHECK_THROWS(h.services->Status());
  h.db->SetFaultHookForTest(nullptr);
  CHECK_FALSE(h.db->InTransaction());
  REQUIRE(core.batcher.Write([&] {
    core.handles.Insert({"second", "handle", 1, false});
    return Status::Ok();
  }).ok());
  core.batcher.Flush();
  CHECK(core.batcher.mode() == service::CommitBatcher::Mode::kWriting);
  CHECK(h.services->Status().counts.at("handles") >= 2);
}

TEST_CASE("a cooldown leaves the status when it expires, with no write in between",
          "[service][status]") {
  testing::ServiceHarness h;
  auto& core = *h.core;
  REQUIRE(core.batcher.Write([&] {
    core.cooldowns.Put({"pa", core.clock.NowMs() + 5000, "rate limited"});
    return Status::Ok();
  }).ok());
  core.batcher.Flush();
  auto s = h.services->Status();
  REQUIRE(s.cooldowns.size() == 1);
  const int64_t rereads = s.counts.at("status_rereads");
  h.clock.Advance(6000);
  s = h.services->Status();
  CHECK(s.cooldowns.empty());
  CHECK(s.counts.at("status_rereads") == rereads);  // filtered by the clock, not re-read
}

}  // namespace
}  // namespace conclave
