// Database: one SQLite connection, owned by the service loop's thread (not thread-safe).
// Statement: a prepared statement with positional binds (1-based) and column reads (0-based).
// Errors surface as StoreError exceptions, thrown by repositories. They never cross the service
// layer: every read and write the services make runs inside the commit batcher
// (service/commit_batcher) or a request handler that turns a StoreError into a Status — the
// store's own Transaction (store/transaction.h) classifies a failed COMMIT.
// Fault injection for tests: a hook consulted before every statement (and COMMIT) runs;
// returning an SQLite error code makes that statement fail with it.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace conclave::store {

class StoreError : public std::runtime_error {
 public:
  StoreError(int sqlite_code, const std::string& what)
      : std::runtime_error(what), sqlite_code_(sqlite_code) {}
  int sqlite_code() const { return sqlite_code_; }

 private:
  int sqlite_code_;
};

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string_view(value)); }
  Statement& Bind(int index, const std::string& value) {
    return Bind(index, std::string_view(value));
  }
  Statement& BindNull(int index);

  // Advances to the next row; false when done.
  bool Step();
  // Runs a statement that returns no rows.
  void Run() { while (Step()) {} }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class Database {
 public:
  struct Options {
    bool synchronous_full = false;
    int busy_timeout_ms = 5000;
  };

  // Opens (creating if needed) the database file in WAL mode. Throws StoreError.
  Database(const std::string& path, const Options& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more SQL statements with no results.
  void Exec(std::string_view sql);
  // Prepares a fresh statement; the caller owns it for one use.
  Statement Prepare(std::string_view sql);

  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  bool InTransaction() const { return !sqlite3_get_autocommit(db_); }
  const std::string& path() const { return path_; }

  // Test-only: `hook(sql)` runs before each Exec and Prepare; a non-zero SQLite code makes
  // that statement fail with it (StoreError). Pass nullptr to remove it.
  using FaultHook = std::function<int(std::string_view sql)>;
  void SetFaultHookForTest(FaultHook hook) { fault_hook_ = std::move(hook); }

 private:
  void MaybeInjectFault(std::string_view sql);
  FaultHook fault_hook_;
  sqlite3* db_ = nullptr;
  std::string path_;
};

// Throws StoreError when rc is not one of the success codes.
void CheckSqlite(sqlite3* db, int rc, std::string_view what);

}  // namespace conclave::store
