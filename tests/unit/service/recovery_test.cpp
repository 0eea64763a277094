// Unit tests: crash recovery (service/recovery) when the store cannot take its write — the
// dispatches a crash interrupted are ended and re-queued once writes land again, not left
// "running" with their terminals busy for the life of the daemon.
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "service_harness.h"

namespace conclave {
namespace {
using domain::DispatchState;

// A task whose one dispatch runs (on the fake launcher): what a crash leaves in the store.
int64_t RunningTask(testing::ServiceHarness& h) {
  h.AddProfile("p", "fam");
  h.AddTerminal("w1", "p");
  int64_t t = h.AddTask("do it");
  REQUIRE(h.Dispatch(t, "w1").ok());
  REQUIRE(h.RunUntil([&] {
    auto ds = h.Dispatches(t);
    return !ds.empty() && ds[0].state == DispatchState::kRunning;
  }));
  return t;
}

TEST_CASE("recovery that could not be written runs again once the disk has room",
          "[service][recovery]") {
  testing::ServiceHarness h;
  int64_t t = RunningTask(h);
  // As after a crash: the store says running. Recovery runs on a full disk.
  bool full = true;
  h.db->SetFaultHookForTest([&](std::string_view sql) {
    return full && sql == "COMMIT" ? SQLITE_FULL : SQLITE_OK;
  });
  h.services->recovery.Run();
  h.Settle();
  REQUIRE(h.core->batcher.mode() == service::CommitBatcher::Mode::kDiskFull);
  CHECK(h.Dispatches(t)[0].state == DispatchState::kRunning);  // nothing of it landed
  full = false;
  h.clock.Advance(1000);  // the disk-full probe finds room
  REQUIRE(h.RunUntil([&] { return h.Dispatches(t)[0].state == DispatchState::kInterrupted; }));
  CHECK(h.core->batcher.mode() == service::CommitBatcher::Mode::kWriting);
  CHECK(h.Dispatches(t).size() == 2);  // re-queued as a new dispatch
}

TEST_CASE("recovery whose write fails for another reason gives up instead of retrying at once",
          "[service][recovery]") {
  testing::ServiceHarness h;
  int64_t t = RunningTask(h);
  // Not a full disk: the store still takes writes, so a retry would fail the same way, at
  // once and for ever (it used to recurse until the stack ran out).
  h.db->SetFaultHookForTest([&](std::string_view sql) {
    return sql.find("UPDATE dispatches") != std::string_view::npos ? SQLITE_IOERR : SQLITE_OK;
  });
  h.services->recovery.Run();
  h.Settle();
  CHECK(h.core->batcher.mode() == service::CommitBatcher::Mode::kWriting);
  CHECK(h.Dispatches(t)[0].state == DispatchState::kRunning);
}

}  // namespace
}  // namespace conclave
