#include "store/database.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "store/sqlite_memory.h"
#include "store/wal_checkpointer.h"
#include "store/wal_write_vfs.h"

#ifdef CONCLAVE_BUNDLED_SQLITE
// The header is the bundled amalgamation's, not the system's (cmake/BundledSqlite.cmake).
static_assert(SQLITE_VERSION_NUMBER == CONCLAVE_SQLITE_VERSION_NUMBER,
              "compiled against the bundled SQLite's header");
#endif

namespace conclave::store {
namespace {
// Idle copies kept per SQL text (more exist only while the same query runs nested).
constexpr size_t kMaxIdlePerText = 4;
// Distinct SQL texts cached; past this, statements are compiled per use (a bug to look at:
// SQL texts are meant to be a small fixed set).
constexpr size_t kMaxCachedTexts = 1024;

// The database file's page size (512 to 65536), read without the statement cache: a cached
// statement would outlive a constructor that throws after this and keep the connection open.
int64_t FilePageBytes(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  int64_t bytes = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    bytes = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return std::max<int64_t>(bytes, 512);
}

// Whether the first statement SQLite would compile from sql is a ROLLBACK (ROLLBACK TO
// included): past blanks, comments and empty statements (a lone ';'), which SQLite skips.
bool IsRollback(std::string_view sql) {
  size_t i = 0;
  for (;;) {
    while (i < sql.size() && (std::isspace(static_cast<unsigned char>(sql[i])) || sql[i] == ';')) {
      ++i;
    }
    if (sql.substr(i, 2) == "--") {
      size_t end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (sql.substr(i, 2) == "/*") {
      size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      break;
    }
  }
  constexpr std::string_view kWord = "rollback";
  if (sql.size() - i < kWord.size()) return false;
  for (size_t k = 0; k < kWord.size(); ++k) {
    if (std::tolower(static_cast<unsigned char>(sql[i + k])) != kWord[k]) return false;
  }
  size_t after = i + kWord.size();
  if (after == sql.size()) return true;
  unsigned char c = static_cast<unsigned char>(sql[after]);
  return !(std::isalnum(c) || c == '_' || c == '$' || c >= 0x80);
}

int OnWalCommit(void* arg, sqlite3*, const char*, int pages) {
  static_cast<WalCheckpointer*>(arg)->NoteWalPages(pages);
  return SQLITE_OK;
}
}  // namespace

bool IsLocked(const StoreError& e) { return (e.sqlite_code() & 0xff) == SQLITE_BUSY; }

void CheckSqlite(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw StoreError(rc, msg);
}

Statement::~Statement() {
  if (!stmt_) return;
  sqlite3_reset(stmt_);  // ends the statement's read snapshot at once
  if (slot_ && slot_->idle.size() < kMaxIdlePerText) {
    sqlite3_clear_bindings(stmt_);
    slot_->idle.push_back(stmt_);
  } else {
    sqlite3_finalize(stmt_);
  }
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  CheckSqlite(db(), sqlite3_bind_int64(stmt_, index, value), "bind");
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  CheckSqlite(db(), sqlite3_bind_double(stmt_, index, value), "bind");
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  CheckSqlite(db(),
              sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                  SQLITE_UTF8),
              "bind");
  return *this;
}

Statement& Statement::BindKept(int index, const std::string& value) {
  CheckSqlite(db(),
              sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC,
                                  SQLITE_UTF8),
              "bind");
  return *this;
}

Statement& Statement::BindNull(int index) {
  CheckSqlite(db(), sqlite3_bind_null(stmt_, index), "bind");
  return *this;
}

bool Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  CheckSqlite(db(), rc, sqlite3_sql(stmt_));
  return false;
}

std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

Database::Database(const std::string& path, const Options& options) : path_(path) {
  InstallSqliteAllocator();  // before SQLite initializes
  // The loop's connection writes every WAL frame: through the VFS that gathers a commit's
  // frames into one write (store/wal_write_vfs.h).
  const int create = options.query_only ? 0 : SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | create | SQLITE_OPEN_NOMUTEX,
                           WalWriteVfsName());
  if (rc != SQLITE_OK) {
    std::string msg = "cannot open database " + path + ": " +
                      (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(rc, msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  // Also the rollbacks SQLite makes by itself (a statement failing with IOERR, FULL or NOMEM
  // can roll the whole transaction back): the row caches must hear of every one.
  sqlite3_rollback_hook(db_, &Database::OnRollback, this);
  sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  try {
    // A statement's plan never depends on the values bound to it (the query planner stability
    // guarantee). Without it SQLite since 3.4x reads a bound LIMIT while planning, and a cached
    // statement whose LIMIT is bound anew is prepared again: every Wait's query, ~180k
    // instructions each time. The plans are the ones tests/unit/store/query_plan_test pins.
    CheckSqlite(db_, sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_QPSG, 1, nullptr),
                "query planner stability guarantee");
    if (options.query_only) {
      // The loop's connection owns the file's settings and the WAL; this one only reads. Not
      // even its close may checkpoint (it can be the last to close in a test).
      CheckSqlite(db_, sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr),
                  "no checkpoint on close");
      Exec("PRAGMA query_only=ON;");
      sqlite3_stmt* mode = nullptr;  // not cached: the catch below closes the connection
      CheckSqlite(db_, sqlite3_prepare_v2(db_, "PRAGMA journal_mode", -1, &mode, nullptr),
                  "PRAGMA journal_mode");
      const int step = sqlite3_step(mode);
      const unsigned char* text = step == SQLITE_ROW ? sqlite3_column_text(mode, 0) : nullptr;
      std::string journal = text ? reinterpret_cast<const char*>(text) : "";
      std::string error = step == SQLITE_ROW ? "" : sqlite3_errmsg(db_);
      sqlite3_finalize(mode);
      if (!error.empty()) throw StoreError(step, path + ": PRAGMA journal_mode: " + error);
      if (journal != "wal") {
        throw StoreError(SQLITE_CANTOPEN, path + ": journal mode " + journal +
                                              ", not WAL; a reader opens only the daemon's own "
                                              "database");
      }
      Exec("PRAGMA cache_size=-" + std::to_string(options.cache_kib) + ";");
      Exec("PRAGMA temp_store=MEMORY;");
      return;
    }
    // A new database gets 1 KiB pages (an existing one keeps the size it was made with).
    // Every commit writes each page it touched to the WAL whole, and SQLite checksums every
    // byte it writes there: a commit on the dispatch path touches ~17 pages (rows, their
    // indexes, the counters), and with 4 KiB pages the checksums alone were 10% of the loop's
    // instructions there. The read paths at 1M messages stay indexed
    // (one level deeper in the B-trees).
    Exec("PRAGMA page_size=" + std::to_string(kNewPageBytes) + ";");
    Exec("PRAGMA journal_mode=WAL;");
    Exec(options.synchronous_full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;");
    Exec("PRAGMA foreign_keys=ON;");
    Exec("PRAGMA cache_size=-" + std::to_string(options.cache_kib) + ";");
    // Dirty pages stay in memory until COMMIT, however many. SQLite 3.40.1 (Debian 12's, which
    // -DCONCLAVE_BUNDLED_SQLITE=OFF links) loses a commit on recovery after a transaction
    // spilled to the WAL, rewrote a spilled page and then rolled part of itself back (ROLLBACK
    // TO, or a statement failing on a constraint): the frames written next keep zero checksums.
    // A transaction that never spills never rewrites a frame.
    Exec("PRAGMA cache_spill=OFF;");
    Exec("PRAGMA temp_store=MEMORY;");
    // No checkpoint inside COMMIT on this (the loop's) connection: see WalCheckpointer.
    Exec("PRAGMA wal_autocheckpoint=0;");
    // A WAL grown by a burst is cut back to this size when it next restarts.
    Exec("PRAGMA journal_size_limit=67108864;");
    if (options.checkpoint_kib > 0 && path != ":memory:" && !path.empty()) {
      int64_t pages = int64_t{options.checkpoint_kib} * 1024 / FilePageBytes(db_);
      checkpointer_ = std::make_unique<WalCheckpointer>(
          path, options.synchronous_full,
          static_cast<int>(std::clamp<int64_t>(pages, 1, std::numeric_limits<int>::max())),
          std::chrono::milliseconds(std::max(0, options.checkpoint_pace_ms)));
      sqlite3_wal_hook(db_, OnWalCommit, checkpointer_.get());
    }
  } catch (...) {
    checkpointer_.reset();
    sqlite3_close_v2(db_);
    throw;
  }
}

Database::~Database() {
  if (checkpointer_) {
    sqlite3_wal_hook(db_, nullptr, nullptr);
    checkpointer_.reset();
  }
  for (auto& [sql, slot] : cache_) {
    for (sqlite3_stmt* s : slot.idle) sqlite3_finalize(s);
  }
  sqlite3_close_v2(db_);  // the last connection folds the WAL in and removes it
}

void Database::MaybeInjectFault(std::string_view sql) {
  if (!fault_hook_) return;
  int rc = fault_hook_(sql);
  if (rc != SQLITE_OK) throw StoreError(rc, std::string(sql) + ": " + sqlite3_errstr(rc) + " (injected)");
}

void Database::Exec(std::string_view sql) {
  ++undo_count_;  // whatever it runs (a ROLLBACK among them), cached rows are not trusted after
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

Statement Database::Prepare(std::string_view sql) { return PrepareCached(sql, false); }

Statement Database::PrepareCached(std::string_view sql, bool undo_allowed) {
  MaybeInjectFault(sql);
  const auto address = reinterpret_cast<uintptr_t>(sql.data());
  ByAddress& fast = by_address_[((address >> 3) ^ (address >> 11)) % kByAddressSlots];
  StatementSlot* slot = nullptr;
  if (fast.key && fast.data == sql.data() && std::string_view(*fast.key) == sql) {
    slot = fast.slot;
  } else if (auto it = cache_.find(sql); it != cache_.end()) {
    slot = &it->second;
    fast = {sql.data(), &it->first, slot};
  }
  const bool undoes = slot ? slot->undoes : IsRollback(sql);
  if (undoes && !undo_allowed) {
    throw StoreError(SQLITE_MISUSE, std::string(sql) +
                                        ": a ROLLBACK runs only through Database::Rollback or "
                                        "RollbackTo, which tell the row caches");
  }
  if (slot && !slot->idle.empty()) {
    sqlite3_stmt* stmt = slot->idle.back();
    slot->idle.pop_back();
    return Statement(slot, stmt);
  }
  sqlite3_stmt* stmt = nullptr;
  CheckSqlite(db_,
              sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                 SQLITE_PREPARE_PERSISTENT, &stmt, nullptr),
              sql);
  ++compiles_;
  if (!slot) {
    if (cache_.size() >= kMaxCachedTexts) return Statement(nullptr, stmt);
    auto it = cache_.emplace(std::string(sql), StatementSlot{}).first;
    slot = &it->second;
    slot->undoes = undoes;
    fast = {sql.data(), &it->first, slot};
  }
  return Statement(slot, stmt);
}

void Database::RunCached(std::string_view sql) { PrepareCached(sql, true).Run(); }

void Database::Begin() { RunCached("BEGIN IMMEDIATE"); }
void Database::BeginRead() { RunCached("BEGIN"); }
void Database::Commit() { RunCached("COMMIT"); }
// The undo count moves first: it must move even when the statement itself fails.
void Database::Rollback() {
  ++undo_count_;
  RunCached("ROLLBACK");
}
void Database::Savepoint() { RunCached("SAVEPOINT op"); }
void Database::Release() { RunCached("RELEASE op"); }
void Database::RollbackTo() {
  ++undo_count_;
  RunCached("ROLLBACK TO op");
}

std::vector<std::string> Database::CachedSql() const {
  std::vector<std::string> out;
  out.reserve(cache_.size());
  for (const auto& [sql, slot] : cache_) out.push_back(sql);
  return out;
}

int64_t Database::PageFetches() const {
  int64_t total = 0;
  for (int op : {SQLITE_DBSTATUS_CACHE_HIT, SQLITE_DBSTATUS_CACHE_MISS}) {
    int cur = 0, high = 0;
    sqlite3_db_status(db_, op, &cur, &high, 0);
    total += cur;
  }
  return total;
}

int64_t Database::checkpoints() const {
  return checkpointer_ ? checkpointer_->checkpoints() : 0;
}

}  // namespace conclave::store
