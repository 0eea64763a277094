// Unit tests: the schema version GetStatus reads on every call comes from the database header
// (PRAGMA user_version), kept equal to the recorded migrations — also for a database written
// by a build that did not set it.
#include <catch2/catch.hpp>

#include "store_test_support.h"

using namespace conclave;
using conclave::testing::TempDb;

namespace {
int64_t UserVersion(store::Database& db) {
  auto st = db.Prepare("PRAGMA user_version");
  st.Step();
  return st.Int(0);
}
}  // namespace

TEST_CASE("the header's schema version follows the recorded migrations", "[store]") {
  TempDb t(false);
  CHECK(store::CurrentSchemaVersion(*t.db) == 0);
  std::vector<store::Migration> ms = {{1, "a", "CREATE TABLE a(x);"},
                                      {3, "c", "CREATE TABLE c(z);"}};
  REQUIRE(store::ApplyMigrations(*t.db, ms).value() == 3);
  CHECK(UserVersion(*t.db) == 3);
  CHECK(store::CurrentSchemaVersion(*t.db) == 3);

  // As an older build leaves it: migrations recorded, header never set.
  t.db->Exec("PRAGMA user_version = 0");
  CHECK(store::CurrentSchemaVersion(*t.db) == 3);  // falls back to the record
  REQUIRE(store::ApplyMigrations(*t.db, ms).value() == 3);
  CHECK(UserVersion(*t.db) == 3);  // and the next start writes it
}
