#include "store/migrations.h"

#include <algorithm>

#include "common/clock.h"

namespace conclave::store {

namespace {
void EnsureVersionTable(Database& db) {
  db.Exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "name TEXT NOT NULL, applied_ms INTEGER NOT NULL);");
}
}  // namespace

int CurrentSchemaVersion(Database& db) {
  // GetStatus asks on every call: one cached statement (MAX of the rowid is a single seek).
  // A fresh database has no table yet: the compile fails, and only then is nothing cached.
  try {
    auto st = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    st.Step();
    return static_cast<int>(st.Int(0));
  } catch (const StoreError& e) {
    if (std::string_view(e.what()).find("no such table") != std::string_view::npos) return 0;
    throw;
  }
}

StatusOr<int> ApplyMigrations(Database& db, const std::vector<Migration>& given) {
  // Applied in version order whatever order they come in; a version twice is a build error.
  std::vector<Migration> migrations = given;
  std::sort(migrations.begin(), migrations.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (size_t i = 1; i < migrations.size(); ++i) {
    if (migrations[i].version == migrations[i - 1].version) {
      return InvalidArgument("migrations: version " + std::to_string(migrations[i].version) +
                             " appears twice (" + migrations[i - 1].name + ", " +
                             migrations[i].name + ")");
    }
  }
  int current;
  try {
    EnsureVersionTable(db);
    current = CurrentSchemaVersion(db);
  } catch (const StoreError& e) {
    return Internal(std::string("reading schema version: ") + e.what());
  }
  int newest = migrations.empty() ? 0 : migrations.back().version;
  if (current > newest) {
    return FailedPrecondition("database " + db.path() + " has schema version " +
                              std::to_string(current) + ", newer than this conclaved knows (" +
                              std::to_string(newest) +
                              "); it was written by a newer Conclave — upgrade conclaved or use "
                              "another --state-dir");
  }
  for (const Migration& m : migrations) {
    if (m.version <= current) continue;
    try {
      db.Begin();
      db.Exec(m.sql);
      db.Prepare("INSERT INTO schema_migrations(version, name, applied_ms) VALUES (?, ?, ?)")
          .Bind(1, m.version)
          .Bind(2, m.name)
          .Bind(3, NowMs())
          .Run();
      db.Commit();
      current = m.version;
    } catch (const StoreError& e) {
      try { db.Rollback(); } catch (const StoreError&) {}
      return Internal("migration " + std::to_string(m.version) + "_" + m.name +
                      " failed: " + e.what());
    }
  }
  return current;
}

}  // namespace conclave::store
