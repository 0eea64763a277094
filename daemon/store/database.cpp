#include "store/database.h"

namespace conclave::store {

void CheckSqlite(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw StoreError(rc, msg);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::Bind(int index, int64_t value) {
  CheckSqlite(db_, sqlite3_bind_int64(stmt_, index, value), "bind");
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  CheckSqlite(db_, sqlite3_bind_double(stmt_, index, value), "bind");
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  CheckSqlite(db_,
              sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                  SQLITE_UTF8),
              "bind");
  return *this;
}

Statement& Statement::BindNull(int index) {
  CheckSqlite(db_, sqlite3_bind_null(stmt_, index), "bind");
  return *this;
}

bool Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  CheckSqlite(db_, rc, sqlite3_sql(stmt_));
  return false;
}

std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

Database::Database(const std::string& path, const Options& options) : path_(path) {
  int rc = sqlite3_open_v2(path.c_str(), &db_,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open database " + path + ": " +
                      (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(rc, msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  Exec("PRAGMA journal_mode=WAL;");
  Exec(options.synchronous_full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;");
  Exec("PRAGMA foreign_keys=ON;");
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::MaybeInjectFault(std::string_view sql) {
  if (!fault_hook_) return;
  int rc = fault_hook_(sql);
  if (rc != SQLITE_OK) throw StoreError(rc, std::string(sql) + ": " + sqlite3_errstr(rc) + " (injected)");
}

void Database::Exec(std::string_view sql) {
  MaybeInjectFault(sql);
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw StoreError(rc, msg);
  }
}

Statement Database::Prepare(std::string_view sql) {
  MaybeInjectFault(sql);
  sqlite3_stmt* stmt = nullptr;
  CheckSqlite(db_, sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr),
              sql);
  return Statement(db_, stmt);
}

}  // namespace conclave::store
