// Schema migrations: numbered SQL files from migrations/ (compiled into the binary), applied
// in order, each inside its own transaction, and recorded in schema_migrations. A database
// whose recorded version is newer than the newest migration this build knows is refused.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "store/database.h"

namespace conclave::store {

struct Migration {
  int version;
  std::string name;
  std::string sql;
};

// All migrations known to this build, ascending by version (generated file).
const std::vector<Migration>& EmbeddedMigrations();

// Applies the pending ones in version order (whatever order they are given in). Returns the
// resulting schema version, or an error that names the problem (newer database, a version
// given twice, a failing migration).
StatusOr<int> ApplyMigrations(Database& db, const std::vector<Migration>& migrations);

// The version recorded in the database (0 for a fresh one).
int CurrentSchemaVersion(Database& db);

}  // namespace conclave::store
