#include "store/migrations.h"

#include "common/clock.h"

namespace conclave::store {

namespace {
void EnsureVersionTable(Database& db) {
  db.Exec(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
      "name TEXT NOT NULL, applied_ms INTEGER NOT NULL);");
}

// The authoritative version: the newest recorded migration (0 for a fresh database).
int RecordedVersion(Database& db) {
  auto exists = db.Prepare(
      "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'");
  exists.Step();
  if (exists.Int(0) == 0) return 0;
  auto st = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  st.Step();
  return static_cast<int>(st.Int(0));
}

}  // namespace

int CurrentSchemaVersion(Database& db) {
  // GetStatus asks on every call: PRAGMA user_version reads the database header only.
  // ApplyMigrations keeps it equal to the recorded version (0 until a build that sets it ran).
  auto st = db.Prepare("PRAGMA user_version");
  st.Step();
  int v = static_cast<int>(st.Int(0));
  return v > 0 ? v : RecordedVersion(db);
}

StatusOr<int> ApplyMigrations(Database& db, const std::vector<Migration>& migrations) {
  int current;
  try {
    EnsureVersionTable(db);
    current = RecordedVersion(db);
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
      db.Exec("PRAGMA user_version = " + std::to_string(m.version));  // in the transaction
      db.Commit();
      current = m.version;
    } catch (const StoreError& e) {
      try { db.Rollback(); } catch (const StoreError&) {}
      return Internal("migration " + std::to_string(m.version) + "_" + m.name +
                      " failed: " + e.what());
    }
  }
  try {
    int64_t header = 0;
    {
      auto st = db.Prepare("PRAGMA user_version");
      st.Step();
      header = st.Int(0);
    }
    if (header != current) {  // written by a build that did not set it
      db.Exec("PRAGMA user_version = " + std::to_string(current));
    }
  } catch (const StoreError& e) {
    return Internal(std::string("recording schema version: ") + e.what());
  }
  return current;
}

}  // namespace conclave::store
