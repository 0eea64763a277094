// Unit tests: SQLite store — migrations (order, recording, refusing a newer schema), the
// message log and its cursors, filters (SQL and in-memory agree), group commit.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <unistd.h>

#include "domain/message.h"
#include "events/event_bus.h"
#include "service/commit_batcher.h"
#include "store/database.h"
#include "store/message_store.h"
#include "store/migrations.h"

using namespace conclave;

namespace {
struct TempDb {
  std::string dir;
  std::unique_ptr<store::Database> db;
  TempDb() {
    char t[] = "/tmp/cvuXXXXXX";
    dir = mkdtemp(t);
    db = std::make_unique<store::Database>(dir + "/t.db", store::Database::Options{});
  }
  ~TempDb() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
};

domain::MessageRecord Msg(const std::string& to, const std::string& type, int64_t task = 0) {
  domain::MessageRecord m;
  m.created_ms = 1;
  m.type = type;
  m.from = "coordinator";
  m.to = to;
  m.subject = "s";
  m.thread_id = "t";
  m.task_id = task;
  return m;
}
}  // namespace

TEST_CASE("migrations apply in order, are recorded, and run once", "[store]") {
  TempDb t;
  std::vector<store::Migration> ms = {{1, "a", "CREATE TABLE a(x);"},
                                      {2, "b", "CREATE TABLE b(y);"}};
  auto v = store::ApplyMigrations(*t.db, ms);
  REQUIRE(v.ok());
  CHECK(v.value() == 2);
  auto again = store::ApplyMigrations(*t.db, ms);
  REQUIRE(again.ok());
  CHECK(again.value() == 2);
  auto st = t.db->Prepare("SELECT COUNT(*) FROM schema_migrations");
  st.Step();
  CHECK(st.Int(0) == 2);
  ms.push_back({3, "c", "CREATE TABLE c(z);"});
  CHECK(store::ApplyMigrations(*t.db, ms).value() == 3);
}

TEST_CASE("a database newer than this build is refused with a clear error", "[store]") {
  TempDb t;
  std::vector<store::Migration> ms = {{1, "a", "CREATE TABLE a(x);"},
                                      {2, "b", "CREATE TABLE b(y);"}};
  REQUIRE(store::ApplyMigrations(*t.db, ms).ok());
  ms.pop_back();
  auto r = store::ApplyMigrations(*t.db, ms);
  REQUIRE(!r.ok());
  CHECK(r.status().code() == Code::kFailedPrecondition);
  CHECK(r.status().message().find("newer") != std::string::npos);
}

TEST_CASE("a failing migration rolls back whole and names itself", "[store]") {
  TempDb t;
  std::vector<store::Migration> ms = {{1, "ok", "CREATE TABLE a(x);"},
                                      {2, "broken", "CREATE TABLE b(y); CREATE TABLE oops"}};
  auto r = store::ApplyMigrations(*t.db, ms);
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("2_broken") != std::string::npos);
  CHECK(store::CurrentSchemaVersion(*t.db) == 1);
  auto st = t.db->Prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'");
  st.Step();
  CHECK(st.Int(0) == 0);
}

TEST_CASE("the embedded migrations build the real schema", "[store]") {
  TempDb t;
  auto r = store::ApplyMigrations(*t.db, store::EmbeddedMigrations());
  REQUIRE(r.ok());
  CHECK(r.value() == store::EmbeddedMigrations().back().version);
  auto st = t.db->Prepare("PRAGMA journal_mode");
  st.Step();
  CHECK(st.Text(0) == "wal");
}

TEST_CASE("cursors: seq grows monotonically and After() resumes exactly", "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  std::vector<int64_t> seqs;
  for (int i = 0; i < 10; ++i) {
    auto m = Msg(i % 2 ? "a" : "b", i % 3 ? "status" : "question", i % 4);
    ms.Insert(m);
    seqs.push_back(m.seq);
  }
  for (size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i] > seqs[i - 1]);
  CHECK(ms.LastSeq() == seqs.back());
  domain::MessageFilter all;
  auto rest = ms.After(all, seqs[4], 100);
  REQUIRE(rest.size() == 5);
  CHECK(rest.front().seq == seqs[5]);
  // The SQL filter and the in-memory filter agree on every message and filter.
  std::vector<domain::MessageFilter> filters(4);
  filters[1].to = "a";
  filters[2].types = {"question"};
  filters[3].task_ids = {1, 3};
  auto everything = ms.After(all, 0, 100);
  for (const auto& f : filters) {
    auto sql = ms.After(f, 0, 100);
    size_t expected = 0;
    for (const auto& m : everything) expected += f.Matches(m) ? 1 : 0;
    CHECK(sql.size() == expected);
    for (const auto& m : sql) CHECK(f.Matches(m));
  }
  // The high-water mark survives deleting rows.
  t.db->Exec("DELETE FROM messages");
  CHECK(ms.LastSeq() == seqs.back());
}

TEST_CASE("TakeUnread marks read unless peeking", "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  auto a = Msg("h", "status");
  auto b = Msg("h", "question");
  ms.Insert(a);
  ms.Insert(b);
  CHECK(ms.TakeUnread("h", {}, 10, true).size() == 2);
  CHECK(ms.TakeUnread("h", {"question"}, 10, false).size() == 1);
  CHECK(ms.TakeUnread("h", {}, 10, false).size() == 1);
  CHECK(ms.TakeUnread("h", {}, 10, false).empty());
}

TEST_CASE("group commit: one transaction per loop turn; a failed request rolls back alone",
          "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  boost::asio::io_context io;
  store::MessageStore ms(*t.db);
  std::vector<int64_t> published;
  service::CommitBatcher batcher(io, *t.db, [&](const auto& v) {
    for (const auto& m : v) published.push_back(m.seq);
  });
  std::vector<bool> acks;
  for (int i = 0; i < 3; ++i) {
    Status s = batcher.Write([&]() -> Status {
      auto m = Msg("h", "status");
      ms.Insert(m);
      batcher.Publish(m);
      if (i == 1) return InvalidArgument("no");  // this one is rolled back
      return Status::Ok();
    });
    CHECK(s.ok() == (i != 1));
    batcher.AfterCommit([&](bool ok) { acks.push_back(ok); });
  }
  CHECK(acks.empty());          // nothing acknowledged before COMMIT
  CHECK(published.empty());
  io.run();                     // the posted flush commits all at once
  CHECK(batcher.commits() == 1);
  CHECK(acks == std::vector<bool>{true, true, true});
  CHECK(published.size() == 2);
  CHECK(ms.Count() == 2);
}

TEST_CASE("event bus: waiters wake on matching commits only, and time out with nothing",
          "[store]") {
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
