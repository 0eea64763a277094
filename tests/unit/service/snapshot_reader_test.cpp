// SnapshotReader: reads that walk history run on their own thread and query-only connection,
// so the loop goes on meanwhile; the report is built there. Over real SQLite files.
#include "service/snapshot_reader.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include "service_harness.h"
#include "store/dispatch_store.h"

namespace conclave {
namespace {
using testing::ServiceHarness;

int64_t CountDispatches(store::Database& db) {
  auto st = db.Prepare("SELECT COUNT(*) FROM dispatches");
  st.Step();
  return st.Int(0);
}

void AddFinishedDispatches(store::Database& db, int64_t task_id, int n) {
  store::DispatchStore dispatches(db);
  for (int i = 0; i < n; ++i) {
    store::DispatchRecord d;
    d.task_id = task_id;
    d.target = d.terminal = "w";
    d.profile = "bench";
    d.family = "local";
    d.coordinator = "c";
    d.state = domain::DispatchState::kSucceeded;
    d.created_ms = 1000 + i;
    d.finished_ms = 2000 + i;
    dispatches.Insert(d);
  }
}

TEST_CASE("a report walks the store off the loop: the loop writes while the walk is held",
          "[service][snapshot]") {
  ServiceHarness h;
  int64_t task = h.AddTask("reported");
  AddFinishedDispatches(*h.db, task, 50);

  // The walk is held on its thread, its snapshot begun, until the loop has created a task and
  // committed one more dispatch. Were the walk on the loop, the loop would be the one held:
  // nothing could be created until the hold timed out, and `released` would stay false.
  struct Hold {
    std::atomic<bool> entered{false}, released{false};
    std::promise<void> release;
    std::shared_future<void> go = release.get_future().share();
    std::thread::id walk_thread;
  };
  auto hold = std::make_shared<Hold>();
  const std::thread::id loop_thread = std::this_thread::get_id();
  h.core->snapshots.SetBeforeWorkForTest([hold] {
    hold->walk_thread = std::this_thread::get_id();
    hold->entered = true;
    hold->released = hold->go.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  });
  std::optional<StatusOr<service::ReportView>> built;
  h.services->reviews.Report(0, [&](StatusOr<service::ReportView> r) { built = std::move(r); });
  REQUIRE(h.RunUntil([&] { return hold->entered.load(); }));
  int64_t meanwhile = h.AddTask("created while the report is held");
  CHECK(meanwhile > task);
  AddFinishedDispatches(*h.db, task, 1);  // committed after the walk's snapshot began
  hold->release.set_value();
  REQUIRE(h.RunUntil([&] { return built.has_value(); }));
  CHECK(hold->released);
  CHECK(hold->walk_thread != loop_thread);
  REQUIRE(built->ok());
  REQUIRE((*built)->profiles.size() == 1);
  CHECK((*built)->profiles[0].profile == "bench");
  CHECK((*built)->profiles[0].invocations == 50);  // one state of the store: not the 51st
  CHECK((*built)->profiles[0].clean == 50);
  CHECK(h.core->snapshots.reads_off_loop() == 1);
  CHECK(CountDispatches(*h.db) == 51);
}

TEST_CASE("a snapshot read cannot write, and its failures come back as errors",
          "[service][snapshot]") {
  ServiceHarness h;
  int64_t task = h.AddTask("t");
  AddFinishedDispatches(*h.db, task, 3);
  auto& reader = h.core->snapshots;

  std::optional<StatusOr<int64_t>> wrote;
  reader.Read<int64_t>(
      [](store::Database& db) {
        db.Exec("DELETE FROM dispatches");
        return int64_t{1};
      },
      [&](StatusOr<int64_t> r) { wrote = std::move(r); });
  REQUIRE(h.RunUntil([&] { return wrote.has_value(); }));
  REQUIRE_FALSE(wrote->ok());
  CHECK(wrote->status().code() == Code::kUnavailable);
  CHECK_THAT(wrote->status().message(), Catch::Contains("readonly"));
  CHECK(CountDispatches(*h.db) == 3);

  std::optional<StatusOr<int64_t>> threw;
  reader.Read<int64_t>([](store::Database&) -> int64_t { throw std::runtime_error("no figures"); },
                       [&](StatusOr<int64_t> r) { threw = std::move(r); });
  REQUIRE(h.RunUntil([&] { return threw.has_value(); }));
  REQUIRE_FALSE(threw->ok());
  CHECK(threw->status().code() == Code::kInternal);
  CHECK_THAT(threw->status().message(), Catch::Contains("no figures"));

  // The write failed in the store: its connection was closed, and the next read opens another
  // (no transaction or interrupted state outlives a read). The throwing work's did not.
  CHECK(reader.connections_opened() == 2);
  // The reader still reads, and sees what the loop committed since.
  AddFinishedDispatches(*h.db, task, 2);
  std::optional<StatusOr<int64_t>> counted;
  reader.Read<int64_t>(CountDispatches, [&](StatusOr<int64_t> r) { counted = std::move(r); });
  REQUIRE(h.RunUntil([&] { return counted.has_value(); }));
  REQUIRE(counted->ok());
  CHECK(**counted == 5);
  CHECK(reader.reads_off_loop() == 1);
  CHECK(reader.connections_opened() == 2);
}

TEST_CASE("a query-only connection opens only a database in WAL mode",
          "[service][snapshot]") {
  ServiceHarness h;  // for its temporary directory
  const std::string path = h.dir + "/rollback.db";
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "CREATE TABLE t(x)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  store::Database::Options options;
  options.query_only = true;
  try {
    store::Database reader(path, options);
    FAIL("a rollback-journal database was opened as a reader");
  } catch (const store::StoreError& e) {
    CHECK_THAT(e.what(), Catch::Contains("not WAL"));
  }
  CHECK_THROWS_AS(store::Database(h.dir + "/missing.db", options), store::StoreError);
  CHECK_FALSE(std::filesystem::exists(h.dir + "/missing.db"));
}

TEST_CASE("a database without a file is read on the loop's own connection", "[service][snapshot]") {
  boost::asio::io_context io;
  store::Database db(":memory:", {});
  db.Exec("CREATE TABLE t(x); INSERT INTO t VALUES (7);");
  service::SnapshotReader reader(io, db);
  std::thread::id ran_on;
  std::optional<StatusOr<int64_t>> read;
  reader.Read<int64_t>(
      [&](store::Database& on) {
        ran_on = std::this_thread::get_id();
        CHECK(&on == &db);
        auto st = on.Prepare("SELECT x FROM t");
        st.Step();
        return st.Int(0);
      },
      [&](StatusOr<int64_t> r) { read = std::move(r); });
  CHECK_FALSE(read.has_value());  // in a later turn of the loop, never inside Read
  io.run();
  REQUIRE(read.has_value());
  REQUIRE(read->ok());
  CHECK(**read == 7);
  CHECK(ran_on == std::this_thread::get_id());
  CHECK(reader.reads_off_loop() == 0);
}

}  // namespace
}  // namespace conclave
