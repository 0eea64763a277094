// Bench section: the SQL of one Send alone — no gRPC, no loop — on a database the daemon
// created (its schema, indexes and counter triggers), against a bare SQLite write of one row
// into a table with no index, both with the daemon's settings: its page size, WAL,
// synchronous=NORMAL, and no checkpoint inside COMMIT — the WAL is folded between timed
// transactions once it holds 16 MiB of pages, as the daemon's checkpointer thread does.
// It isolates how much of the Send → wake gap is the store, next to the rows that include the
// RPCs. SQLite's own VFS writes the WAL here; the daemon's gathers a commit into one write.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "bench_sections.h"
#include "store/database.h"
#include "store/wal_write_vfs.h"

namespace bench {
namespace {

sqlite3* Open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      conclave::store::WalWriteVfsName()) != SQLITE_OK ||
      sqlite3_exec(db,
                   ("PRAGMA page_size=" + std::to_string(conclave::store::Database::kNewPageBytes) +
                    "; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                    "PRAGMA foreign_keys=ON; PRAGMA cache_size=-32768; "
                    "PRAGMA cache_spill=OFF; PRAGMA temp_store=MEMORY;")
                       .c_str(),
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "bench: sql: open %s: %s\n", path.c_str(), sqlite3_errmsg(db));
    std::exit(1);
  }
  return db;
}

// Runs the statements of one transaction, `n` times; each statement text is compiled once.
// Parameter ?1 is a creation time in epoch ms, ?2 a thread id like the daemon's ("t-" and 12
// hex digits), both new for each transaction.
class Txn {
 public:
  Txn(sqlite3* db, std::vector<std::string> sql) : db_(db) {
    // Replaces SQLite's checkpoint inside COMMIT: Time() folds the WAL outside the clock.
    sqlite3_wal_hook(
        db,
        [](void* pages, sqlite3*, const char*, int n) {
          *static_cast<int*>(pages) = n;
          return SQLITE_OK;
        },
        &wal_pages_);
    sqlite3_stmt* page = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &page, nullptr) == SQLITE_OK &&
        sqlite3_step(page) == SQLITE_ROW && sqlite3_column_int(page, 0) > 0) {
      fold_pages_ = (16 << 20) / sqlite3_column_int(page, 0);
    }
    sqlite3_finalize(page);
    for (const auto& s : sql) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v3(db, s.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) !=
          SQLITE_OK) {
        std::fprintf(stderr, "bench: sql: %s: %s\n", s.c_str(), sqlite3_errmsg(db));
        std::exit(1);
      }
      stmts_.push_back(st);
    }
  }
  ~Txn() {
    sqlite3_wal_hook(db_, nullptr, nullptr);
    for (auto* st : stmts_) sqlite3_finalize(st);
  }
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
  std::vector<double> Time(int n) {
    std::vector<double> out;
    for (int i = 0; i < n; ++i) {
      int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
      char thread[16];
      std::snprintf(thread, sizeof thread, "t-%012llx",
                    static_cast<unsigned long long>(++count_ * 0x9e3779b97f4aULL) & 0xffffffffffffULL);
      auto t0 = Clock::now();
      for (auto* st : stmts_) {
        int params = sqlite3_bind_parameter_count(st);
        if (params >= 1) sqlite3_bind_int64(st, 1, now_ms);
        if (params >= 2) sqlite3_bind_text(st, 2, thread, -1, SQLITE_STATIC);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
        if (rc != SQLITE_DONE) {
          std::fprintf(stderr, "bench: sql: %s: %s\n", sqlite3_sql(st), sqlite3_errmsg(db_));
          std::exit(1);
        }
        sqlite3_reset(st);
      }
      out.push_back(Micros(Clock::now() - t0));
      if (wal_pages_ >= fold_pages_) {
        int log = 0, done = 0;
        int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
        if (rc != SQLITE_OK || done != log) {
          std::fprintf(stderr, "bench: sql: checkpoint folded %d of %d pages: %s\n", done, log,
                       sqlite3_errmsg(db_));
          std::exit(1);
        }
        wal_pages_ = 0;
      }
    }
    return out;
  }

 private:
  sqlite3* db_;
  std::vector<sqlite3_stmt*> stmts_;
  uint64_t count_ = 0;
  int wal_pages_ = 0;
  int fold_pages_ = 16384;  // 16 MiB of the file's own pages, as the daemon's checkpointer
};

}  // namespace

void RunSql(Env& env) {
  Daemon d;
  d.StartNew(env.daemon_bin, env.root + "/sql");
  {
    auto stub = Stub(d.socket(), 9);
    if (!RegisterHandle(*stub, "w")) {
      std::fprintf(stderr, "bench: sql: could not register the handle the Sends address\n");
      std::exit(1);
    }
  }
  d.Stop();
  sqlite3* daemon_db = Open(d.db_path());
  sqlite3* bare_db = Open(d.dir + "/bare.db");
  if (sqlite3_exec(bare_db, "CREATE TABLE t(x INTEGER PRIMARY KEY, v INTEGER NOT NULL)",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "bench: sql: bare table: %s\n", sqlite3_errmsg(bare_db));
    std::exit(1);
  }
  {
    // What MessagingService::Send runs for one recipient, in the commit batcher's frame: the
    // turn's first write, so without a savepoint of its own (since f3677a4).
    Txn send(daemon_db,
             {"BEGIN IMMEDIATE",
              "SELECT name, kind, created_ms, closed FROM handles WHERE name = 'w'",
              "INSERT INTO messages(created_ms, type, priority, sender, recipient, subject, "
              "body, payload, task_id, dispatch_id, thread_id, reply_to, read) VALUES "
              "(?1, 'status', 'normal', 'bench', 'w', 'bench', 'a message of about forty "
              "bytes', '', 0, 0, ?2, 0, 0)",
              "COMMIT"});
    Txn bare(bare_db, {"BEGIN IMMEDIATE", "INSERT INTO t(v) VALUES (?1)", "COMMIT"});
    for (int rep = 0; rep < env.reps; ++rep) {
      std::fprintf(stderr, "bench: sql, rep %d\n", rep + 1);
      auto parts = Interleaved(600, 50, {[&](int k) { return send.Time(k); },
                                         [&](int k) { return bare.Time(k); }});
      for (double pct : {50.0, 99.0}) {
        Row& r = env.table.Get(std::string("a Send's SQL alone (no RPC, no loop) ") +
                                   (pct == 50 ? "p50" : "p99"),
                               "µs", "one-row write");
        r.conclave.push_back(Percentile(parts[0], pct));
        r.bare.push_back(Percentile(parts[1], pct));
      }
    }
  }
  for (sqlite3* db : {daemon_db, bare_db}) {
    if (sqlite3_close(db) != SQLITE_OK) std::fprintf(stderr, "bench: sql: close failed\n");
  }
  std::filesystem::remove_all(d.dir);
}

}  // namespace bench
