// Unit tests: group commit and what happens when a COMMIT fails (service/commit_batcher over
// store/transaction), with faults injected into a real SQLite file and a fake clock.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <sqlite3.h>

#include "../store/temp_db.h"
#include "fake_clock.h"
#include "service/commit_batcher.h"
#include "store/message_store.h"
#include "store/migrations.h"

namespace conclave {
namespace {
using testing::Msg;
using testing::TempDb;

struct Fixture {
  TempDb t;
  boost::asio::io_context io;
  testing::FakeClock clock;
  store::MessageStore ms{*t.db};
  std::vector<int64_t> published;
  service::CommitBatcher batcher{io, *t.db, clock, [this](const auto& v) {
                                   for (const auto& m : v) published.push_back(m.seq);
                                 }};
  Fixture() { REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok()); }
  Status Insert(const std::string& to) {
    return batcher.Write([&]() -> Status {
      auto m = Msg(to, "status");
      ms.Insert(m);
      batcher.Publish(m);
      return Status::Ok();
    });
  }
  void Run() {
    io.restart();
    io.poll();
  }
  int64_t Rows(const std::string& to) {
    auto st = t.db->Prepare("SELECT COUNT(*) FROM messages WHERE recipient = ?");
    st.Bind(1, to);
    st.Step();
    return st.Int(0);
  }
};

TEST_CASE("group commit: one transaction per loop turn — a failed request rolls back alone",
          "[service][batcher]") {
  Fixture f;
  std::vector<bool> acks;
  for (int i = 0; i < 3; ++i) {
    Status s = f.batcher.Write([&]() -> Status {
      auto m = Msg("h", "status");
      f.ms.Insert(m);
      f.batcher.Publish(m);
      if (i == 1) return InvalidArgument("no");  // this one is rolled back
      return Status::Ok();
    });
    CHECK(s.ok() == (i != 1));
    f.batcher.AfterCommit([&](bool ok) { acks.push_back(ok); });
  }
  CHECK(acks.empty());  // nothing acknowledged before COMMIT
  CHECK(f.published.empty());
  f.Run();  // the posted flush commits all at once
  CHECK(f.batcher.commits() == 1);
  CHECK(acks == std::vector<bool>{true, true, true});
  CHECK(f.published.size() == 2);
  CHECK(f.Rows("h") == 2);
}

TEST_CASE("the turn's first write runs without a savepoint: failing, it rolls the transaction "
          "back, and the writes after it commit in a transaction of their own",
          "[service][batcher]") {
  Fixture f;
  int savepoints = 0, rollbacks = 0;
  f.t.db->SetFaultHookForTest([&](std::string_view sql) {
    if (sql == "SAVEPOINT op") ++savepoints;
    if (sql == "ROLLBACK") ++rollbacks;
    return SQLITE_OK;
  });
  std::vector<std::pair<std::string, bool>> acks;
  auto write = [&](const std::string& to, bool fail) {
    Status s = f.batcher.Write([&]() -> Status {
      auto m = Msg(to, "status");
      f.ms.Insert(m);
      f.batcher.Publish(m);
      f.batcher.AfterCommit([&, to](bool ok) { acks.emplace_back(to, ok); });
      return fail ? InvalidArgument("no") : Status::Ok();
    });
    CHECK(s.ok() == !fail);
  };
  write("first", true);  // the turn's first write fails: ROLLBACK, not ROLLBACK TO
  CHECK(savepoints == 0);
  CHECK(rollbacks == 1);
  CHECK_FALSE(f.batcher.pending());
  write("second", false);  // opens the next transaction, again without a savepoint
  write("third", true);    // rolls back to its own savepoint
  write("fourth", false);
  CHECK(savepoints == 2);
  CHECK(rollbacks == 1);
  f.Run();
  CHECK(f.batcher.commits() == 1);
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kWriting);
  CHECK(f.Rows("first") == 0);
  CHECK(f.Rows("second") == 1);
  CHECK(f.Rows("third") == 0);
  CHECK(f.Rows("fourth") == 1);
  CHECK(f.published.size() == 2);
  using Acks = std::vector<std::pair<std::string, bool>>;
  CHECK(acks == Acks{{"second", true}, {"fourth", true}});  // failed writes' actions never run
}

TEST_CASE("a failing first write that SQLite already rolled back leaves the store writing, and "
          "one whose ROLLBACK fails stops it",
          "[service][batcher]") {
  Fixture f;
  Status s = f.batcher.Write([&]() -> Status {
    auto m = Msg("gone", "status");
    f.ms.Insert(m);
    f.t.db->Rollback();  // as SQLite does by itself after some errors
    return Internal("the statement failed and took the transaction with it");
  });
  CHECK(s.code() == Code::kInternal);
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kWriting);
  REQUIRE(f.Insert("next").ok());
  f.Run();
  CHECK(f.Rows("gone") == 0);
  CHECK(f.Rows("next") == 1);

  f.t.db->SetFaultHookForTest([&](std::string_view sql) {
    return sql == "ROLLBACK" ? SQLITE_IOERR : SQLITE_OK;
  });
  Status failed = f.batcher.Write([&]() -> Status {
    auto m = Msg("failing", "status");
    f.ms.Insert(m);
    return Internal("the request failed after writing");
  });
  CHECK(failed.code() == Code::kUnavailable);
  f.t.db->SetFaultHookForTest(nullptr);
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kBroken);
  CHECK(f.Rows("failing") == 0);  // the flush abandons what the transaction holds
  CHECK(f.Insert("after").code() == Code::kUnavailable);
}

TEST_CASE("a first write that succeeds after SQLite rolled its transaction back stops the batch",
          "[service][batcher]") {
  Fixture f;
  bool acted = false;
  Status s = f.batcher.Write([&]() -> Status {
    auto m = Msg("rolled-back", "status");
    f.ms.Insert(m);
    f.t.db->Rollback();  // as SQLite does by itself after an I/O error the write swallowed
    f.batcher.AfterCommit([&](bool) { acted = true; });
    return Status::Ok();
  });
  CHECK(s.code() == Code::kUnavailable);
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kBroken);
  CHECK_FALSE(acted);
  CHECK(f.Rows("rolled-back") == 0);
  CHECK(f.Insert("after").code() == Code::kUnavailable);
}

TEST_CASE("disk full at COMMIT: writes are refused with RESOURCE_EXHAUSTED, then resume by "
          "themselves and the waiting writes land",
          "[service][batcher]") {
  Fixture f;
  bool full = true;
  f.t.db->SetFaultHookForTest([&](std::string_view sql) {
    return full && sql == "COMMIT" ? SQLITE_FULL : SQLITE_OK;
  });
  REQUIRE(f.Insert("lost").ok());
  std::optional<bool> ack;
  f.batcher.AfterCommit([&](bool ok) {
    ack = ok;
    // A completion write that could not land: retried once space returns.
    if (!ok) f.batcher.WhenWritable([&] { REQUIRE(f.Insert("retried").ok()); });
  });
  f.Run();
  REQUIRE(ack.has_value());
  CHECK_FALSE(*ack);
  CHECK(f.published.empty());  // a rolled-back message never reaches a waiter
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kDiskFull);
  CHECK(f.Rows("lost") == 0);  // the outcome is known: nothing of it was written
  Status refused = f.Insert("later");
  CHECK(refused.code() == Code::kResourceExhausted);
  CHECK(refused.message().find("disk is full") != std::string::npos);
  CHECK(refused.message().find("database or disk is full") != std::string::npos);  // the cause

  f.clock.Advance(1000);  // the probe runs and still fails
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kDiskFull);
  CHECK(f.Rows("retried") == 0);

  full = false;  // space returns
  f.clock.Advance(1000);
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kWriting);
  CHECK(f.Rows("retried") == 1);
  CHECK(f.Insert("after").ok());
  f.Run();
  CHECK(f.Rows("after") == 1);
}

TEST_CASE("disk full inside a write: that write is refused and the store stops taking writes",
          "[service][batcher]") {
  Fixture f;
  bool full = true;
  f.t.db->SetFaultHookForTest([&](std::string_view sql) {
    return full && sql.find("INSERT INTO messages") != std::string_view::npos ? SQLITE_FULL
                                                                               : SQLITE_OK;
  });
  Status s = f.Insert("x");
  CHECK(s.code() == Code::kResourceExhausted);
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kDiskFull);
  full = false;
  f.clock.Advance(1000);
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kWriting);
}

TEST_CASE("a savepoint that cannot be rolled back stops the batch: nothing of it commits",
          "[service][batcher]") {
  Fixture f;
  f.t.db->SetFaultHookForTest([&](std::string_view sql) {
    return sql == "ROLLBACK TO op" ? SQLITE_IOERR : SQLITE_OK;
  });
  REQUIRE(f.Insert("before").ok());  // an earlier request of the same batch
  std::optional<bool> ack;
  f.batcher.AfterCommit([&](bool ok) { ack = ok; });
  bool acted = false;
  Status failed = f.batcher.Write([&]() -> Status {
    auto m = Msg("failing", "status");
    f.ms.Insert(m);
    f.batcher.Publish(m);
    f.batcher.AfterCommit([&](bool) { acted = true; });
    return Internal("the request failed after writing");
  });
  CHECK(failed.code() == Code::kUnavailable);
  f.Run();
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kBroken);
  CHECK(ack == false);  // the earlier request learns its write did not land
  CHECK_FALSE(acted);   // the failed request's own action never runs
  CHECK(f.published.empty());
  CHECK(f.Rows("before") == 0);
  CHECK(f.Rows("failing") == 0);
  CHECK(f.Insert("after").code() == Code::kUnavailable);
}

TEST_CASE("a COMMIT with an unknown outcome stops every later write until restart",
          "[service][batcher]") {
  Fixture f;
  int commits = 0;
  f.t.db->SetFaultHookForTest([&](std::string_view sql) {
    return sql == "COMMIT" && ++commits == 1 ? SQLITE_IOERR : SQLITE_OK;
  });
  REQUIRE(f.Insert("a").ok());
  bool retried = false;
  std::optional<bool> ack;
  f.batcher.AfterCommit([&](bool ok) {
    ack = ok;
    f.batcher.WhenWritable([&] { retried = true; });
  });
  f.Run();
  CHECK(ack == false);
  CHECK(f.batcher.mode() == service::CommitBatcher::Mode::kBroken);
  for (int i = 0; i < 3; ++i) {
    Status s = f.Insert("b");
    CHECK(s.code() == Code::kUnavailable);
    CHECK(s.message().find("outcome is unknown") != std::string::npos);
    CHECK(s.message().find("disk I/O error") != std::string::npos);  // names the cause
    f.clock.Advance(60000);  // no probe brings it back: its outcome is not known
    f.Run();
  }
  CHECK_FALSE(retried);
  CHECK(f.Rows("b") == 0);
}

}  // namespace
}  // namespace conclave
