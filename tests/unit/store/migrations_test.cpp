// Unit tests: schema migrations (store/migrations).
#include <set>
#include <catch2/catch.hpp>

#include "store/message_store.h"
#include "store/migrations.h"
#include "temp_db.h"

namespace conclave {
namespace {
using testing::Msg;
using testing::TempDb;

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


TEST_CASE("migrations given out of order are applied in version order", "[store]") {
  TempDb t;
  // 2 needs the table 1 creates: applied in the order given, 2 would fail.
  std::vector<store::Migration> ms = {{2, "uses_a", "CREATE INDEX a_x ON a(x);"},
                                      {1, "creates_a", "CREATE TABLE a(x);"}};
  auto v = store::ApplyMigrations(*t.db, ms);
  REQUIRE(v.ok());
  CHECK(v.value() == 2);
  auto st = t.db->Prepare("SELECT name FROM schema_migrations ORDER BY version");
  std::vector<std::string> names;
  while (st.Step()) names.push_back(st.Text(0));
  CHECK(names == std::vector<std::string>{"creates_a", "uses_a"});
  std::vector<store::Migration> twice = {{3, "x", "SELECT 1;"}, {3, "y", "SELECT 1;"}};
  auto dup = store::ApplyMigrations(*t.db, twice);
  CHECK(dup.status().code() == Code::kInvalidArgument);
  CHECK(dup.status().message().find("version 3 appears twice") != std::string::npos);
}

TEST_CASE("the embedded migrations build the real schema", "[store]") {
  TempDb t;
  auto r = store::ApplyMigrations(*t.db, store::EmbeddedMigrations());
  REQUIRE(r.ok());
  CHECK(r.value() == store::EmbeddedMigrations().back().version);
  auto st = t.db->Prepare("PRAGMA journal_mode");
  st.Step();
  CHECK(st.Text(0) == "wal");
  std::set<std::string> tables;
  auto names = t.db->Prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
  while (names.Step()) tables.insert(names.Text(0));
  for (const char* want : {"handles", "messages", "terminals", "tasks", "task_deps", "dispatches",
                           "gates", "cooldowns", "reviews", "review_rounds", "schema_migrations"}) {
    INFO(want);
    CHECK(tables.count(want) == 1);
  }
  // A row of every lifecycle table can be written with the columns the repositories use.
  t.db->Exec(
      "INSERT INTO tasks(title, brief, status, role, coordinator, created_ms, updated_ms) "
      "VALUES ('t', 'b', 'ready', 'writer', 'coordinator', 1, 1);"
      "INSERT INTO dispatches(task_id, target, state, attempt, coordinator, created_ms) "
      "VALUES (1, 'x', 'queued', 1, 'coordinator', 1);");
}

}  // namespace
}  // namespace conclave
