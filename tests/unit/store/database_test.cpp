// Unit tests: Database — the statement cache (compile once, reset and cleared on return,
// nested use), transaction control through cached statements, and the WAL checkpoint moved
// off the writer's COMMIT onto the background checkpointer; a savepoint rolled back inside a
// transaction too big for the page cache loses no commit when the process is killed.
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "store/message_store.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::PollUntil;
using conclave::testing::TempDb;

namespace {
int64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}
int64_t Rows(store::Database& db) {
  auto st = db.Prepare("SELECT COUNT(*) FROM t");
  st.Step();
  return st.Int(0);
}
}  // namespace

TEST_CASE("a statement is compiled once per SQL text and reused", "[store]") {
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER, y TEXT)");
  int64_t before = t.db->compiles();
  for (int i = 0; i < 100; ++i) {
    t.db->Prepare("INSERT INTO t(x, y) VALUES (?, ?)").Bind(1, i).Bind(2, "v").Run();
  }
  CHECK(t.db->compiles() - before == 1);
  CHECK(Rows(*t.db) == 100);
  auto texts = t.db->CachedSql();
  CHECK(std::find(texts.begin(), texts.end(), "INSERT INTO t(x, y) VALUES (?, ?)") != texts.end());
}

// The cache finds a text first by where it lives (most are literals), but only ever hands out
// the statement of the text it is given: a buffer rewritten in place with another text of the
// same length gets that text's statement, and one text from two places is compiled once.
TEST_CASE("a text rewritten at the same address gets its own statement, never the last one's",
          "[store]") {
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1), (2);");
  std::string text = "SELECT 10 + x FROM t WHERE x = 1";
  const char* where = text.data();
  auto value = [&] {
    auto st = t.db->Prepare(text);
    REQUIRE(st.Step());
    return st.Int(0);
  };
  CHECK(value() == 11);
  for (int i = 0; i < 3; ++i) {
    text[7] = static_cast<char>('2' + i);  // "SELECT 20 + ...", then 30, 40: same length
    REQUIRE(text.data() == where);         // the same address
    CHECK(value() == (2 + i) * 10 + 1);
  }
  text.replace(text.size() - 1, 1, "2");  // WHERE x = 2
  REQUIRE(text.data() == where);
  CHECK(value() == 42);
  const int64_t before = t.db->compiles();
  std::string elsewhere = "SELECT 10 + x FROM t WHERE x = 1";
  auto st = t.db->Prepare(elsewhere);
  REQUIRE(st.Step());
  CHECK(st.Int(0) == 11);
  CHECK(t.db->compiles() == before);  // cached under its text, found from a new address
}

TEST_CASE("a returned statement is rewound and its bindings cleared", "[store]") {
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER, y TEXT)");
  t.db->Prepare("INSERT INTO t(x, y) VALUES (?, ?)").Bind(1, 1).Bind(2, "first").Run();
  t.db->Prepare("INSERT INTO t(x, y) VALUES (?, ?)").Bind(1, 2).Run();  // y left unbound
  auto st = t.db->Prepare("SELECT y FROM t WHERE x = ?");
  st.Bind(1, 2);
  REQUIRE(st.Step());
  CHECK(st.IsNull(0));  // not "first" left over from the previous use
  {
    // A statement abandoned mid-result goes back rewound: the next use starts over.
    auto all = t.db->Prepare("SELECT x FROM t ORDER BY x");
    REQUIRE(all.Step());
    CHECK(all.Int(0) == 1);
  }
  auto again = t.db->Prepare("SELECT x FROM t ORDER BY x");
  REQUIRE(again.Step());
  CHECK(again.Int(0) == 1);
}

// BindKept takes the caller's string as it is: a temporary would be gone before the statement
// steps, so it does not compile.
template <typename T>
concept BindsKept = requires(store::Statement& st, T&& v) { st.BindKept(1, std::forward<T>(v)); };
static_assert(BindsKept<std::string&>);
static_assert(BindsKept<const std::string&>);
static_assert(!BindsKept<std::string>);
static_assert(!BindsKept<std::string&&>);

TEST_CASE("a kept binding stores the caller's text and is cleared with the statement's return",
          "[store]") {
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER, y TEXT)");
  std::string long_text(5000, 'k');
  std::string empty;
  {
    auto st = t.db->Prepare("INSERT INTO t(x, y) VALUES (?, ?)");
    st.Bind(1, 1).BindKept(2, long_text).Run();
    long_text.assign(5000, 'z');  // after the step: the row keeps what was bound
  }
  t.db->Prepare("INSERT INTO t(x, y) VALUES (?, ?)").Bind(1, 2).BindKept(2, empty).Run();
  t.db->Prepare("INSERT INTO t(x, y) VALUES (?, ?)").Bind(1, 3).Run();  // y left unbound
  auto st = t.db->Prepare("SELECT x, y FROM t ORDER BY x");
  REQUIRE(st.Step());
  CHECK(st.Text(1) == std::string(5000, 'k'));
  REQUIRE(st.Step());
  CHECK_FALSE(st.IsNull(1));  // an empty string, not NULL
  CHECK(st.Text(1).empty());
  REQUIRE(st.Step());
  CHECK(st.IsNull(1));  // nothing left over from the kept bindings before
}

TEST_CASE("the same SQL may run nested: a second copy is compiled and both are cached",
          "[store]") {
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1), (2), (3);");
  int64_t before = t.db->compiles();
  int64_t pairs = 0;
  for (int round = 0; round < 3; ++round) {
    auto outer = t.db->Prepare("SELECT x FROM t WHERE x >= ? ORDER BY x");
    outer.Bind(1, 1);
    while (outer.Step()) {
      auto inner = t.db->Prepare("SELECT x FROM t WHERE x >= ? ORDER BY x");
      inner.Bind(1, outer.Int(0));
      while (inner.Step()) ++pairs;
    }
  }
  CHECK(pairs == 3 * (3 + 2 + 1));
  CHECK(t.db->compiles() - before == 2);
}

TEST_CASE("transaction control: savepoints roll back alone, commit keeps the rest", "[store]") {
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER)");
  t.db->Begin();
  CHECK(t.db->InTransaction());
  t.db->Savepoint();
  t.db->Prepare("INSERT INTO t VALUES (?)").Bind(1, 1).Run();
  t.db->Release();
  t.db->Savepoint();
  t.db->Prepare("INSERT INTO t VALUES (?)").Bind(1, 2).Run();
  t.db->RollbackTo();
  t.db->Release();
  t.db->Commit();
  CHECK_FALSE(t.db->InTransaction());
  CHECK(Rows(*t.db) == 1);
  t.db->Begin();
  t.db->Prepare("INSERT INTO t VALUES (?)").Bind(1, 3).Run();
  t.db->Rollback();
  CHECK(Rows(*t.db) == 1);
  // A failing statement inside a savepoint leaves the transaction usable.
  t.db->Begin();
  t.db->Savepoint();
  CHECK_THROWS_AS(t.db->Prepare("INSERT INTO nowhere VALUES (1)"), store::StoreError);
  t.db->RollbackTo();
  t.db->Release();
  t.db->Commit();
}

TEST_CASE("a ROLLBACK runs through the statement cache only as Rollback or RollbackTo",
          "[store]") {
  // A ROLLBACK TO fires no rollback hook: run through Prepare, it would undo rows the stores'
  // caches still serve (store/row_cache.h).
  TempDb t;
  t.db->Exec("CREATE TABLE t(x INTEGER)");
  auto refused = [&](const std::string& sql) {
    try {
      t.db->Prepare(sql).Run();
    } catch (const store::StoreError& e) {
      return e.sqlite_code() == SQLITE_MISUSE &&
             std::string(e.what()).find("Database::Rollback") != std::string::npos;
    }
    return false;
  };
  t.db->Begin();
  t.db->Savepoint();
  t.db->Prepare("INSERT INTO t VALUES (1)").Run();
  uint64_t undo = t.db->undo_count();
  CHECK(refused("ROLLBACK TO op"));
  CHECK(refused("  rollback to savepoint op;"));
  CHECK(refused("/* a comment */ ROLLBACK TRANSACTION TO op"));
  CHECK(refused("-- a comment\nRollBack"));
  CHECK(refused("ROLLBACK"));
  // SQLite skips empty statements to compile the first real one.
  CHECK(refused(";ROLLBACK TO op"));
  CHECK(refused(" ; -- a comment\n;rollback to op"));
  // Nothing ran: the row is still there and the transaction open.
  CHECK(Rows(*t.db) == 1);
  CHECK(t.db->InTransaction());
  CHECK(t.db->undo_count() == undo);
  // Other statements that merely mention the word run.
  CHECK_FALSE(refused("SELECT 'ROLLBACK'"));
  CHECK_FALSE(refused("SELECT 1 AS rollback_count"));
  // The sanctioned paths run, and move the undo count; once cached, the text is still refused.
  t.db->RollbackTo();
  CHECK(t.db->undo_count() == undo + 1);
  CHECK(Rows(*t.db) == 0);
  CHECK(refused("ROLLBACK TO op"));
  t.db->Release();
  t.db->Rollback();
  CHECK_FALSE(t.db->InTransaction());
}

TEST_CASE("COMMIT never checkpoints: without the background checkpointer the WAL only grows",
          "[store]") {
  store::Database::Options opts;
  opts.checkpoint_kib = 0;  // no background checkpointer
  TempDb t(false, opts);
  t.db->Exec("CREATE TABLE t(x INTEGER, pad TEXT)");
  std::string pad(4000, 'p');       // about 4 KiB per row
  for (int i = 0; i < 1500; ++i) {  // past SQLite's default autocheckpoint of 1000 pages
    t.db->Begin();
    t.db->Prepare("INSERT INTO t VALUES (?, ?)").Bind(1, i).Bind(2, pad).Run();
    t.db->Commit();
  }
  CHECK(FileSize(t.path() + "-wal") > 1000 * 4096);
  CHECK(t.db->checkpoints() == 0);
}

TEST_CASE("the background checkpointer folds the WAL back, and nothing committed is lost",
          "[store]") {
  store::Database::Options opts;
  opts.checkpoint_kib = 200;
  TempDb t(false, opts);
  t.db->Exec("CREATE TABLE t(x INTEGER, pad TEXT)");
  std::string pad(4000, 'p');
  for (int i = 0; i < 600; ++i) {
    t.db->Begin();
    t.db->Prepare("INSERT INTO t VALUES (?, ?)").Bind(1, i).Bind(2, pad).Run();
    t.db->Commit();
  }
  // The writer never checkpoints (see above): the checkpointer copies the WAL into the
  // database file on its own thread. The file grows while a checkpoint runs and the count
  // moves when it has returned: both are waited for, or a fast poll sees the first alone.
  REQUIRE(PollUntil([&] { return FileSize(t.path()) > 500 * 4096 && t.db->checkpoints() > 0; },
                    std::chrono::seconds(20)));
  for (int i = 600; i < 1200; ++i) {
    t.db->Begin();
    t.db->Prepare("INSERT INTO t VALUES (?, ?)").Bind(1, i).Bind(2, pad).Run();
    t.db->Commit();
  }
  CHECK(Rows(*t.db) == 1200);
  // Reopened from the file alone (WAL included), every committed row is there.
  t.db.reset();
  store::Database again(t.path(), {});
  CHECK(Rows(again) == 1200);
}

// Under a steady stream of commits the WAL stays past the threshold and every commit asks for
// a checkpoint; rounds are paced, so those requests wait for the next round instead of each
// starting one (with its two fsyncs). Stopping does not wait out the pace.
TEST_CASE("the checkpointer paces its rounds: commits past the threshold meanwhile wait",
          "[store]") {
  store::Database::Options opts;
  opts.checkpoint_kib = 64;
  opts.checkpoint_pace_ms = 3600 * 1000;
  TempDb t(false, opts);
  t.db->Exec("CREATE TABLE t(x INTEGER, pad TEXT)");
  std::string pad(3000, 'p');
  int rows = 0;
  auto commit = [&] {
    t.db->Begin();
    t.db->Prepare("INSERT INTO t VALUES (?, ?)").Bind(1, rows++).Bind(2, pad).Run();
    t.db->Commit();
  };
  // Past the threshold (64 KiB of 1 KiB pages): the first round starts at once.
  for (int i = 0; i < 40; ++i) commit();
  REQUIRE(PollUntil([&] { return t.db->checkpoints() > 0; }, std::chrono::seconds(20)));
  const int64_t first = t.db->checkpoints();
  // Each of these commits leaves the WAL past the threshold and asks again; unpaced, the thread
  // ran round after round through them.
  for (int i = 0; i < 400; ++i) commit();
  CHECK(t.db->checkpoints() == first);
  // Closing stops the thread in its pace (an unstoppable pace would hang here) and keeps
  // every commit.
  t.db.reset();
  store::Database again(t.path(), {});
  CHECK(Rows(again) == rows);
}

// SQLite 3.40.1 (Debian 12's) loses a commit on recovery when a transaction spilled pages to
// the WAL, rewrote a spilled page after a SAVEPOINT, and then rolled back to it: the frames it
// appends afterwards keep zero checksums (sqlite3WalSavepointUndo leaves iReCksum past the
// rolled-back end), so recovery stops there and drops that commit and every later one. The
// daemon rolls a failed request back to `SAVEPOINT op` (every write of a turn but the first),
// so its connection never spills.
TEST_CASE(
    "a savepoint rolled back in a transaction bigger than the page cache loses no commit "
    "when the process is killed",
    "[store]") {
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/t.db";
  int acks[2];
  REQUIRE(pipe(acks) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // the child never returns into the test runner, whatever happens
    close(acks[0]);
    try {
      store::Database::Options opts;
      opts.cache_kib = 64;        // a 400 KiB transaction would spill many times over
      opts.checkpoint_kib = 0;    // everything stays in the WAL, where recovery must find it
      store::Database db(path, opts);
      db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT)");
      auto insert = [&](int64_t id, char fill) {
        db.Prepare("INSERT INTO t(id, a, b) VALUES (?, ?, ?)")
            .Bind(1, id)
            .Bind(2, std::string(1000, fill))
            .Bind(3, std::to_string(id))
            .Run();
      };
      db.Begin();
      for (int64_t i = 0; i < 200; ++i) insert(i, 'a');
      db.Savepoint();  // a request that writes a lot, rewrites it, then fails
      for (int64_t i = 200; i < 400; ++i) insert(i, 'b');
      db.Exec("UPDATE t SET b = b || 'x' WHERE id >= 200");
      db.RollbackTo();
      db.Release();
      insert(1000, 'm');
      db.Commit();
      db.Begin();  // a later, small commit
      insert(1001, 'n');
      db.Commit();
      char ok = 1;
      if (write(acks[1], &ok, 1) != 1) _exit(1);  // both acknowledged
    } catch (...) {
      _exit(2);
    }
    pause();
    _exit(0);
  }
  close(acks[1]);
  char ok = 0;
  bool acked = read(acks[0], &ok, 1) == 1;
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  close(acks[0]);
  REQUIRE(acked);
  CHECK(WIFSIGNALED(st));
  store::Database after(path, {});  // recovery reads the WAL and checks every checksum
  auto one = [&](const char* sql) {
    auto q = after.Prepare(sql);
    REQUIRE(q.Step());
    return q.Int(0);
  };
  CHECK(one("SELECT COUNT(*) FROM t") == 202);
  CHECK(one("SELECT COUNT(*) FROM t WHERE id IN (1000, 1001)") == 2);
  CHECK(one("SELECT COUNT(*) FROM t WHERE id >= 200 AND id < 400") == 0);
  auto check = after.Prepare("PRAGMA integrity_check");
  REQUIRE(check.Step());
  CHECK(check.Text(0) == "ok");
}

// A commit writes every page it touched to the WAL whole, and SQLite checksums each byte: the
// pages' size is what a small write costs. A message's commit touches ~7 pages (its row, four
// indexes, the sequence): about 7.8 KB with the daemon's 1 KiB pages, about 29 KB with
// SQLite's default 4 KiB.
TEST_CASE("a new database's commit of one message writes small pages to the WAL", "[store]") {
  store::Database::Options opts;
  opts.checkpoint_kib = 0;  // the WAL only grows: its growth is what the commits wrote
  TempDb t(true, opts);
  store::MessageStore ms(*t.db);
  auto commit_one = [&](int i) {
    t.db->Begin();
    auto m = conclave::testing::Msg("h" + std::to_string(i % 5), "status", i % 7);
    ms.Insert(m);
    t.db->Commit();
  };
  for (int i = 0; i < 200; ++i) commit_one(i);  // the B-trees past their first pages
  int64_t before = FileSize(t.path() + "-wal");
  constexpr int kCommits = 100;
  for (int i = 200; i < 200 + kCommits; ++i) commit_one(i);
  int64_t per_commit = (FileSize(t.path() + "-wal") - before) / kCommits;
  INFO("WAL bytes per message commit: " << per_commit);
  CHECK(per_commit > 0);
  CHECK(per_commit < 12 * 1024);
}

TEST_CASE("a database made with 4 KiB pages opens with its rows, keeps its pages and is folded",
          "[store]") {
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/old.db";
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw,
                         "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; "
                         "CREATE TABLE t(x INTEGER, pad TEXT); "
                         "INSERT INTO t VALUES (1, 'a'), (2, 'b');",
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  store::Database::Options opts;
  opts.checkpoint_kib = 64;  // 16 of its pages, not 64 of the new size
  store::Database db(path, opts);
  auto page = db.Prepare("PRAGMA page_size");
  REQUIRE(page.Step());
  CHECK(page.Int(0) == 4096);
  CHECK(Rows(db) == 2);
  std::string pad(3000, 'p');
  // ~3 frames a commit (the new leaf, its parent, page 1): ~28, past 16 pages, short of 64.
  for (int i = 0; i < 10; ++i) {
    db.Begin();
    db.Prepare("INSERT INTO t VALUES (?, ?)").Bind(1, i).Bind(2, pad).Run();
    db.Commit();
  }
  // Counted in its own pages, the WAL is past the threshold: the checkpointer folds it.
  REQUIRE(PollUntil([&] { return db.checkpoints() > 0; }, std::chrono::seconds(20)));
  CHECK(Rows(db) == 12);
}
