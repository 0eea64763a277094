// Unit test: the SQLite the store runs on. The bundled one (cmake/BundledSqlite.cmake) is the
// one linked, with its lookaside; and no statement the store caches is prepared again when it
// is bound anew (the query planner stability guarantee store::Database turns on).
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <map>
#include <string>

#include "store/message_store.h"
#include "store/task_store.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::Msg;
using conclave::testing::TempDb;

namespace {

// How many times SQLite has prepared each statement on the connection again.
std::map<sqlite3_stmt*, int> Reprepares(sqlite3* db) {
  std::map<sqlite3_stmt*, int> out;
  for (sqlite3_stmt* st = sqlite3_next_stmt(db, nullptr); st; st = sqlite3_next_stmt(db, st)) {
    out[st] = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0);
  }
  return out;
}

// The statements prepared again since `before` was taken.
std::string PreparedAgain(sqlite3* db, const std::map<sqlite3_stmt*, int>& before) {
  std::string out;
  for (const auto& [st, n] : Reprepares(db)) {
    auto it = before.find(st);
    if (n > (it == before.end() ? 0 : it->second)) out += std::string(sqlite3_sql(st)) + "\n";
  }
  return out;
}

}  // namespace

#ifdef CONCLAVE_BUNDLED_SQLITE
TEST_CASE("the store runs on the bundled SQLite") {
  // The library linked is the one whose header the store was compiled with (a system
  // libsqlite3 found first at run time would differ).
  CHECK(std::string(sqlite3_libversion()) == CONCLAVE_SQLITE_VERSION);
  CHECK(sqlite3_libversion_number() == CONCLAVE_SQLITE_VERSION_NUMBER);
  CHECK(std::string(sqlite3_libversion()) == SQLITE_VERSION);
}
#endif

#ifdef CONCLAVE_SQLITE_LOOKASIDE
TEST_CASE("the store's statements take their small blocks from SQLite's lookaside") {
  // Debian's libsqlite3 is built without one, and there every small block a statement takes
  // is a malloc (the sanitizer builds leave it out too, so ASan sees every block).
  TempDb t(true);
  store::MessageStore messages(*t.db);
  for (int i = 0; i < 20; ++i) {
    auto m = Msg("lead", "status");
    messages.Insert(m);
  }
  domain::MessageFilter f;
  f.to = "lead";
  REQUIRE(messages.After(f, 0, 50).size() == 20);
  int now = 0, high = 0;
  REQUIRE(sqlite3_db_status(t.db->handle(), SQLITE_DBSTATUS_LOOKASIDE_HIT, &now, &high, 0) ==
          SQLITE_OK);
  CHECK(high > 0);
}
#endif

TEST_CASE("a cached statement bound anew is not prepared again: a bound LIMIT does not plan") {
  TempDb t(true);
  store::MessageStore messages(*t.db);
  store::TaskStore tasks(*t.db);
  for (int i = 0; i < 30; ++i) {
    auto m = Msg(i % 2 ? "lead" : "worker-1", i % 3 ? "status" : "worker_done", 1 + i % 4);
    messages.Insert(m);
  }
  // The shapes a Wait, an Inbox and a Check take, each with a new cursor and a new limit, as
  // the daemon's requests bind them; and a list with a limit.
  domain::MessageFilter by_task;
  by_task.task_ids = {2};
  by_task.types = {"worker_done"};
  by_task.from = "coordinator";
  domain::MessageFilter to_lead;
  to_lead.to = "lead";
  domain::MessageFilter unread_status;
  unread_status.types = {"status"};
  unread_status.unread_only = true;
  // The migrations changed the schema, which prepares every statement cached before anew.
  const auto before = Reprepares(t.db->handle());
  for (int round = 0; round < 4; ++round) {
    const int limit = 5 + round * 7;
    const int64_t after = round * 3;
    messages.After(by_task, after, limit);
    if (round % 2 == 1) {
      messages.Newest(to_lead, limit);
    } else {
      messages.After(to_lead, after, limit);
    }
    messages.After(unread_status, after, limit);
    messages.TakeUnread("lead", {"status"}, limit, true);
    tasks.List("", limit);
  }
  const std::string again = PreparedAgain(t.db->handle(), before);
  INFO("prepared again:\n" << again);
  CHECK(again.empty());
}
