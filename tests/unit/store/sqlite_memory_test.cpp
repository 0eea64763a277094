// Unit test: what SQLite holds on the heap is still counted with its statistics mutex off
// (GetStatus reports it; the soak subtracts it from the daemon's RSS).
#include <catch2/catch.hpp>

#include "store/sqlite_memory.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::TempDb;

TEST_CASE("SQLite's heap is counted: it grows with a page cache and falls when it closes") {
  int64_t before = 0, filled = 0;
  {
    TempDb t;
    // ctest runs each test case in a process of its own, whose first SQLite use is this store.
    REQUIRE(store::SqliteAllocatorInstalled());
    before = store::SqliteMemoryUsed();
    t.db->Exec("CREATE TABLE big(id INTEGER PRIMARY KEY, body TEXT)");
    t.db->Begin();
    auto st = t.db->Prepare("INSERT INTO big(body) VALUES (?)");
    const std::string body(1000, 'x');
    for (int i = 0; i < 2000; ++i) {  // ~2 MB of pages, all in the cache until COMMIT
      st.Bind(1, body);
      st.Run();
      st.Reset();
    }
    t.db->Commit();
    filled = store::SqliteMemoryUsed();
    CHECK(filled - before > 1'000'000);
  }
  // The connection and its cache are gone: back to about where it started.
  CHECK(store::SqliteMemoryUsed() - before < (filled - before) / 10);
}
