// Database: one SQLite connection, owned by the service loop's thread (not thread-safe).
// Statements are compiled once per SQL text and kept in a cache: Prepare() hands out a cached
// statement (compiling it only the first time), and the Statement returns it to the cache —
// reset, bindings cleared — when it goes out of scope. Transaction control (BEGIN IMMEDIATE,
// SAVEPOINT, RELEASE, ROLLBACK TO, COMMIT, ROLLBACK) runs through cached statements too.
// SQLite's automatic WAL checkpoint is off: a WalCheckpointer on its own connection and
// thread folds the WAL back into the database, so no COMMIT on the loop pays for it.
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
#include <memory>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace conclave::store {

class WalCheckpointer;

class StoreError : public std::runtime_error {
 public:
  StoreError(int sqlite_code, const std::string& what)
      : std::runtime_error(what), sqlite_code_(sqlite_code) {}
  int sqlite_code() const { return sqlite_code_; }

 private:
  int sqlite_code_;
};

// True when e means the database is locked: held by another connection past the busy timeout
// (at open, another process: conclaved holds its database to itself, see store/wal_write_vfs).
bool IsLocked(const StoreError& e);

// The idle compiled statements of one SQL text (the cache's slot for it).
struct StatementSlot {
  std::vector<sqlite3_stmt*> idle;
  bool undoes = false;  // a ROLLBACK: only Rollback() and RollbackTo() may run it
};

class Statement {
 public:
  // Takes a compiled statement on loan from slot (null slot: finalized after use).
  Statement(StatementSlot* slot, sqlite3_stmt* stmt) : slot_(slot), stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept : slot_(other.slot_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
  }
  Statement& operator=(Statement&&) = delete;
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
  // Binds value without copying it: SQLite reads it where it is when the statement steps, so
  // it must stay alive and unchanged until the last Step(). For a record's fields bound and
  // run at once (the stores' hot writes): each copy was a malloc, a memcpy and a free, ~90 a
  // dispatch. A temporary is refused at compile time.
  Statement& BindKept(int index, const std::string& value);
  Statement& BindKept(int index, const std::string&& value) = delete;

  // Advances to the next row; false when done.
  bool Step();
  // Runs a statement that returns no rows.
  void Run() { while (Step()) {} }
  // Rewinds for another run with new binds (the cache does this on release).
  void Reset();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3* db() const { return sqlite3_db_handle(stmt_); }
  StatementSlot* slot_;
  sqlite3_stmt* stmt_;
};

class Database {
 public:
  // The page size of a database this creates (store/database.cpp says why).
  static constexpr int kNewPageBytes = 1024;

  struct Options {
    bool synchronous_full = false;
    int busy_timeout_ms = 5000;
    // Fold the WAL from a background thread once it holds this many KiB of pages (0: never;
    // then the WAL is folded only when the last connection closes). 16 MiB: hot pages
    // rewritten by many commits are copied once per checkpoint, and checkpoints (with their
    // fsyncs) are rare.
    int checkpoint_kib = 16384;
    // The least time between two of the checkpointer's rounds (store/wal_checkpointer.h).
    int checkpoint_pace_ms = 250;
    // Page cache of the loop's connection, in KiB.
    int cache_kib = 32768;
    // A reader beside the loop's connection (service/SnapshotReader): the file must exist and
    // be in WAL mode already; nothing is created, set in the file or checkpointed (not even
    // at close), and every write is refused (PRAGMA query_only). checkpoint_kib is ignored.
    bool query_only = false;
  };

  // Opens (creating if needed) the database file in WAL mode; with query_only, opens an
  // existing one already in WAL mode. Throws StoreError.
  Database(const std::string& path, const Options& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more SQL statements with no results, compiled afresh (migrations, PRAGMAs).
  void Exec(std::string_view sql);
  // A statement for one SQL text, compiled once and cached; the Statement returns it.
  // A ROLLBACK (ROLLBACK TO included) is refused with SQLITE_MISUSE: through the cache it runs
  // only as Rollback() and RollbackTo(), which move undo_count() for the row caches (Exec,
  // which compiles afresh, moves it too).
  Statement Prepare(std::string_view sql);

  // Transaction control through cached statements. Savepoints are named "op" and nest.
  void Begin();  // BEGIN IMMEDIATE
  void BeginRead();  // BEGIN (deferred): several reads under one lock; end with Commit()
  void Commit();
  void Rollback();
  void Savepoint();
  void Release();
  void RollbackTo();

  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  // Rows inserted, updated or deleted through this connection since it opened (rolled-back
  // changes included): moves with every write this connection makes.
  int64_t TotalChanges() const { return sqlite3_total_changes64(db_); }
  bool InTransaction() const { return !sqlite3_get_autocommit(db_); }
  // The connection itself, for tests that trace what SQLite runs on it.
  sqlite3* handle() const { return db_; }
  // Makes the statement running on this connection stop with SQLITE_INTERRUPT (a StoreError).
  // The one call safe from any thread while another uses the connection.
  void Interrupt() { sqlite3_interrupt(db_); }
  // Lets go of what this connection's page cache holds (a reader between its reads).
  void ReleaseMemory() { sqlite3_db_release_memory(db_); }
  // Moves whenever changes made through this connection may have been undone: ROLLBACK (ours
  // or one SQLite makes by itself), ROLLBACK TO, or any SQL run through Exec. The stores' row caches (store/row_cache.h) drop
  // what they hold when it moved.
  uint64_t undo_count() const { return undo_count_; }
  const std::string& path() const { return path_; }

  // Every SQL text compiled through Prepare() so far (for plan checks and diagnostics).
  std::vector<std::string> CachedSql() const;
  // Statements compiled since open (a cache hit compiles nothing).
  int64_t compiles() const { return compiles_; }
  // WAL checkpoints completed by the background checkpointer.
  int64_t checkpoints() const;
  // Pages this connection has fetched since it opened, from its cache or the file: every
  // index entry or row a statement visits costs at least a fetch (tests bound a read with it).
  int64_t PageFetches() const;

  // Test-only: `hook(sql)` runs before each Exec and Prepare; a non-zero SQLite code makes
  // that statement fail with it (StoreError). Pass nullptr to remove it.
  using FaultHook = std::function<int(std::string_view sql)>;
  void SetFaultHookForTest(FaultHook hook) { fault_hook_ = std::move(hook); }

 private:
  static void OnRollback(void* self) { ++static_cast<Database*>(self)->undo_count_; }
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  Statement PrepareCached(std::string_view sql, bool undo_allowed);
  void RunCached(std::string_view sql);
  void MaybeInjectFault(std::string_view sql);
  FaultHook fault_hook_;
  sqlite3* db_ = nullptr;
  std::string path_;
  // Node-based: a slot's address stays valid while Statements point at it. Entries are never
  // erased, so the fast index below may keep pointers to them.
  std::unordered_map<std::string, StatementSlot, Hash, std::equal_to<>> cache_;
  // The cache's entries by where the caller's text lives: nearly every text is a literal or a
  // static string, passed from the same address each time. An entry is used only when the
  // text there still equals its key (one memcmp, where the map hashed the whole text first).
  struct ByAddress {
    const char* data = nullptr;
    const std::string* key = nullptr;
    StatementSlot* slot = nullptr;
  };
  static constexpr size_t kByAddressSlots = 128;
  ByAddress by_address_[kByAddressSlots];
  int64_t compiles_ = 0;
  uint64_t undo_count_ = 0;
  std::unique_ptr<WalCheckpointer> checkpointer_;
};

// Throws StoreError when rc is not one of the success codes.
void CheckSqlite(sqlite3* db, int rc, std::string_view what);

}  // namespace conclave::store
