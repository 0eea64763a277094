// Unit tests: the WAL-writing VFS (store/wal_write_vfs) — a commit's frames reach the file in one
// write; another connection reads every commit the moment COMMIT returns; a transaction that
// spilled and rewrote its frames in place survives as a crash image (the WAL copied with no shared
// memory, so SQLite's recovery checks every checksum); a process killed between commits loses
// nothing it committed; a write refused by the file system fails COMMIT and leaves nothing
// half-visible, and in exclusive locking mode leaves the connection writing; a rolled-back spill
// never lands over another writer's frames; a database without power-safe overwrite under
// synchronous=FULL has every published frame in the file; a full disk while a spilled transaction
// reads its own frames back rolls the whole transaction back, so its COMMIT cannot publish frames
// that were never written.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "store/wal_write_vfs.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::TempDb;

namespace {

// The first column of the first row of sql, or "error: ..." (empty when there is no row).
std::string One(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    return std::string("error: ") + sqlite3_errmsg(db);
  }
  std::string out;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(st, 0);
    out = t ? reinterpret_cast<const char*>(t) : "";
  } else if (rc != SQLITE_DONE) {
    out = std::string("error: ") + sqlite3_errmsg(db);
  }
  sqlite3_finalize(st);
  return out;
}

// A plain connection through SQLite's default VFS, reading the WAL through its own file
// descriptor: what it sees is what the file holds. (In this process it shares SQLite's lock
// table and the heap wal-index with the VFS's connection; another process could not open the
// database at all while that connection holds it: store/wal_write_vfs.cpp, Register.)
struct Plain {
  sqlite3* db = nullptr;
  explicit Plain(const std::string& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  }
  ~Plain() { sqlite3_close_v2(db); }
  std::string One(const std::string& sql) { return ::One(db, sql); }
};

void Schema(store::Database& db) {
  db.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT, c INTEGER)");
  db.Exec("CREATE INDEX t_a ON t(a)");
  db.Exec("CREATE INDEX t_b ON t(b)");
  db.Exec("CREATE INDEX t_c ON t(c)");
}

void Insert(store::Database& db, int64_t id, size_t width = 200) {
  db.Prepare("INSERT INTO t(id, a, b, c) VALUES (?, ?, ?, ?)")
      .Bind(1, id)
      .Bind(2, std::string(width, static_cast<char>('a' + id % 26)) + std::to_string(id))
      .Bind(3, std::to_string(id * 7919))
      .Bind(4, id * 31)
      .Run();
}

// A connection through the VFS under test, as the daemon's is, with its own settings.
struct Through {
  sqlite3* db = nullptr;
  int wal_frames = 0;  // the WAL's frame count after the last commit (sqlite3_wal_hook)
  explicit Through(const std::string& uri, const std::string& pragmas) {
    REQUIRE(sqlite3_open_v2(uri.c_str(), &db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                            store::WalWriteVfsName()) == SQLITE_OK);
    Exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; " + pragmas);
    sqlite3_wal_hook(
        db,
        [](void* self, sqlite3*, const char*, int frames) {
          static_cast<Through*>(self)->wal_frames = frames;
          return SQLITE_OK;
        },
        this);
  }
  ~Through() { sqlite3_close_v2(db); }
  void Exec(const std::string& sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    INFO(sql << ": " << (err ? err : ""));
    sqlite3_free(err);
    REQUIRE(rc == SQLITE_OK);
  }
};

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// While alive, no file of this process may grow past file's size plus slack bytes (a write past
// it fails, as on a full file system; SIGXFSZ ignored). Lifted at the end of its scope.
class FileSizeCap {
 public:
  FileSizeCap(const std::string& file, int64_t slack) {
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old_) == 0);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old_;
    small.rlim_cur = static_cast<rlim_t>(FileSize(file) + slack);
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  }
  ~FileSizeCap() {
    setrlimit(RLIMIT_FSIZE, &old_);
    signal(SIGXFSZ, old_handler_);
  }
  FileSizeCap(const FileSizeCap&) = delete;
  FileSizeCap& operator=(const FileSizeCap&) = delete;

 private:
  struct rlimit old_ {};
  void (*old_handler_)(int) = nullptr;
};

// Table t(id, v) holding the row (1, 'one'), through ours.
void OneRow(Through& ours) {
  ours.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB); INSERT INTO t VALUES (1, 'one')");
}

}  // namespace

TEST_CASE("a commit's WAL frames reach the file in one write", "[store]") {
  TempDb t;
  Schema(*t.db);
  for (int round = 0; round < 20; ++round) {
    store::WalWriteCounts before = store::WalWrites();
    t.db->Begin();
    for (int i = 0; i < 10; ++i) Insert(*t.db, round * 100 + i);
    t.db->Commit();
    store::WalWriteCounts after = store::WalWrites();
    INFO("round " << round);
    // Several pages (the table and three indexes), a header and a page asked per frame; all
    // under the 124 KiB the default VFS takes in one call.
    CHECK(after.asked - before.asked >= 8);
    CHECK(after.made - before.made == 1);
  }
  Plain other(t.path());
  CHECK(other.One("SELECT COUNT(*) FROM t") == "200");
}

TEST_CASE("another connection reads every commit the moment COMMIT returns", "[store]") {
  TempDb t;
  Schema(*t.db);
  Plain other(t.path());
  for (int i = 1; i <= 300; ++i) {
    t.db->Begin();
    Insert(*t.db, i);
    t.db->Prepare("UPDATE t SET c = c + 1 WHERE id = ?").Bind(1, int64_t{1}).Run();
    t.db->Commit();
    REQUIRE(other.One("SELECT COUNT(*) || ',' || MAX(id) || ',' || (SELECT c FROM t WHERE id=1) "
                      "FROM t") == std::to_string(i) + "," + std::to_string(i) + "," +
                                       std::to_string(31 + i));
  }
  CHECK(other.One("PRAGMA integrity_check") == "ok");
}

TEST_CASE("a spilled transaction that rewrote its frames survives as a crash image", "[store]") {
  store::Database::Options opts;
  opts.cache_kib = 64;         // far smaller than the transaction: pages spill to the WAL
  opts.checkpoint_kib = 0;     // everything stays in the WAL, where recovery must find it
  TempDb t(false, opts);
  // The daemon's connection never spills (see Database); the VFS must still carry a spill.
  t.db->Exec("PRAGMA cache_spill=ON;");
  Schema(*t.db);
  // The files as a crash would leave them: database and WAL, no shared memory.
  auto image = [&](const std::string& name) {
    std::string crash = t.dir + "/" + name;
    std::filesystem::create_directory(crash);
    std::filesystem::copy_file(t.path(), crash + "/t.db");
    std::filesystem::copy_file(t.path() + "-wal", crash + "/t.db-wal");
    return crash + "/t.db";
  };
  store::WalWriteCounts before = store::WalWrites();
  t.db->Begin();
  for (int i = 0; i < 3000; ++i) Insert(*t.db, i, 1000);
  // Every row again, twice: spilled pages are written again inside the same transaction.
  t.db->Exec("UPDATE t SET c = c + 1, b = b || 'x'");
  t.db->Exec("UPDATE t SET c = c + 1, b = b || 'y'");
  CHECK(store::WalWrites().asked - before.asked > 1000);  // frames written before COMMIT
  t.db->Commit();
  {
    Plain crashed(image("after-big"));  // right after COMMIT returned
    CHECK(crashed.One("PRAGMA integrity_check") == "ok");
    CHECK(crashed.One("SELECT COUNT(*) FROM t") == "3000");
    CHECK(crashed.One("SELECT SUM(c) FROM t") == std::to_string(31 * (2999 * 3000 / 2) + 2 * 3000));
    CHECK(crashed.One("SELECT COUNT(*) FROM t WHERE b LIKE '%xy'") == "3000");
  }
  for (int i = 3000; i < 3010; ++i) {
    t.db->Begin();
    Insert(*t.db, i, 1000);
    t.db->Commit();
  }
  Plain crashed(image("after-small"));
  CHECK(crashed.One("PRAGMA integrity_check") == "ok");
  CHECK(crashed.One("SELECT COUNT(*) FROM t") == "3010");
  CHECK(crashed.One("SELECT SUM(c) FROM t") == std::to_string(31 * (3009 * 3010 / 2) + 2 * 3000));
}

TEST_CASE("a process killed between commits loses nothing it committed", "[store]") {
  for (int run = 0; run < 5; ++run) {
    conclave::testing::TempDir tmp;
    std::string path = tmp.dir + "/t.db";
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      store::Database::Options opts;
      opts.checkpoint_kib = 0;
      store::Database db(path, opts);
      Schema(db);
      for (int64_t i = 1;; ++i) {
        db.Begin();
        Insert(db, i);
        db.Commit();
        if (write(fds[1], &i, sizeof i) != sizeof i) _exit(1);  // acknowledged
      }
    }
    close(fds[1]);
    int64_t acked = 0, id = 0;
    const int64_t stop_after = 50 + run * 40;
    while (acked < stop_after && read(fds[0], &id, sizeof id) == sizeof id) acked = id;
    kill(pid, SIGKILL);  // mid-transaction, most likely: the child never pauses
    int st = 0;
    waitpid(pid, &st, 0);
    while (read(fds[0], &id, sizeof id) == sizeof id) acked = id;  // acks already in the pipe
    close(fds[0]);
    {
      INFO("run " << run << ", acknowledged " << acked);
      REQUIRE(acked >= stop_after);
      Plain after(path);
      CHECK(after.One("PRAGMA integrity_check") == "ok");
      CHECK(std::stoll(after.One("SELECT COUNT(*) FROM t")) >= acked);
      CHECK(after.One("SELECT COUNT(*) FROM t WHERE id <= " + std::to_string(acked)) ==
            std::to_string(acked));
    }
  }
}

TEST_CASE("a WAL write the file system refuses fails COMMIT and leaves nothing visible",
          "[store]") {
  store::Database::Options opts;
  opts.checkpoint_kib = 0;
  TempDb t(false, opts);
  Schema(*t.db);
  for (int i = 0; i < 10; ++i) Insert(*t.db, i);
  Plain other(t.path());
  REQUIRE(other.One("SELECT COUNT(*) FROM t") == "10");

  bool failed = false;
  {
    FileSizeCap cap(t.path() + "-wal", 8192);  // a few KiB, not the 200 KiB this commit needs
    try {
      t.db->Begin();
      for (int i = 100; i < 1100; ++i) Insert(*t.db, i);
      t.db->Commit();
    } catch (const store::StoreError& e) {
      failed = true;
      INFO(e.what());
    }
  }
  CHECK(failed);
  if (t.db->InTransaction()) t.db->Rollback();
  CHECK(other.One("SELECT COUNT(*) FROM t") == "10");

  // Writing resumes once the file may grow, and the store is whole.
  t.db->Begin();
  for (int i = 100; i < 110; ++i) Insert(*t.db, i);
  t.db->Commit();
  CHECK(other.One("SELECT COUNT(*) FROM t") == "20");
  CHECK(other.One("PRAGMA integrity_check") == "ok");
}

TEST_CASE("in exclusive locking mode a COMMIT the file system refuses leaves the connection "
          "writing once the file may grow",
          "[store]") {
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/t.db";
  Through ours(path, "");
  OneRow(ours);
  // (Entered after the WAL is open, so the connection can leave the mode at the end.)
  ours.Exec("PRAGMA locking_mode=EXCLUSIVE; UPDATE t SET v = 'one' WHERE id = 1");
  int commit = SQLITE_OK;
  {
    FileSizeCap cap(path + "-wal", 8192);  // a few KiB, not the ~240 KiB this commit needs
    commit = sqlite3_exec(ours.db,
                          "BEGIN; WITH RECURSIVE c(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM c "
                          "WHERE i < 600) INSERT INTO t SELECT i, randomblob(300) FROM c; COMMIT",
                          nullptr, nullptr, nullptr);
  }
  CHECK(commit != SQLITE_OK);
  if (!sqlite3_get_autocommit(ours.db)) ours.Exec("ROLLBACK");
  // No lock release ends a transaction in this mode: nothing of the failure may stay behind.
  ours.Exec("INSERT INTO t VALUES (2, 'two')");
  CHECK(One(ours.db, "SELECT COUNT(*) || ',' || MAX(id) FROM t") == "2,2");
  ours.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  ours.Exec("PRAGMA locking_mode=NORMAL; SELECT COUNT(*) FROM t");
  Plain other(path);
  CHECK(other.One("PRAGMA integrity_check") == "ok");
  CHECK(other.One("SELECT COUNT(*) || ',' || MAX(id) FROM t") == "2,2");
}

TEST_CASE("frames of a rolled-back spill never land over another writer's commit", "[store]") {
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/t.db";
  {
    Through ours(path, "PRAGMA cache_size=-64;");  // a small cache: the transaction spills
    OneRow(ours);
    Plain other(path);
    REQUIRE(other.One("PRAGMA wal_checkpoint(TRUNCATE)") == "0");  // not busy: the WAL restarts
    store::WalWriteCounts before = store::WalWrites();
    ours.Exec("BEGIN; WITH RECURSIVE c(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM c WHERE i < 200) "
              "INSERT INTO t SELECT i, randomblob(400) FROM c");
    ours.Exec("ROLLBACK");
    CHECK(store::WalWrites().dropped - before.dropped == 1);
    // Another writer commits frames at the offsets the rolled-back ones had.
    REQUIRE(other.One("INSERT INTO t VALUES (1000, 'other') RETURNING id") == "1000");
    REQUIRE(other.One("INSERT INTO t VALUES (1001, 'other') RETURNING id") == "1001");
    // Our connection reads the WAL again (a read writes out anything still buffered).
    Plain check(path);
    CHECK(One(ours.db, "SELECT COUNT(*) || ',' || MAX(id) FROM t") == "3,1001");
    CHECK(check.One("SELECT COUNT(*) || ',' || MAX(id) FROM t") == "3,1001");
  }
  Plain reopened(path);
  CHECK(reopened.One("PRAGMA integrity_check") == "ok");
  CHECK(reopened.One("SELECT COUNT(*) || ',' || MAX(id) FROM t") == "3,1001");
}

TEST_CASE("without power-safe overwrite, synchronous=FULL has every published frame in the file",
          "[store]") {
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/t.db";
  {
    // psow=0: SQLite pads each commit to a sector boundary and syncs in the middle of a frame.
    Through ours("file:" + path + "?psow=0", "PRAGMA synchronous=FULL;");
    ours.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)");
    Plain other(path);
    for (int i = 1; i <= 8; ++i) {
      ours.Exec("INSERT INTO t VALUES (NULL, randomblob(9000))");
      INFO("commit " << i << ", " << ours.wal_frames << " frames published");
      CHECK(FileSize(path + "-wal") >= 32 + int64_t{ours.wal_frames} * (24 + 4096));
      CHECK(other.One("SELECT COUNT(*) || ',' || SUM(LENGTH(v)) FROM t") ==
            std::to_string(i) + "," + std::to_string(9000 * i));
    }
  }
}

TEST_CASE("a commit bigger than one write survives as a crash image", "[store]") {
  store::Database::Options opts;
  opts.checkpoint_kib = 0;
  TempDb t(false, opts);
  Schema(*t.db);
  store::WalWriteCounts before = store::WalWrites();
  t.db->Begin();
  for (int i = 0; i < 400; ++i) Insert(*t.db, i, 900);  // about 1 MiB of frames
  t.db->Commit();
  store::WalWriteCounts after = store::WalWrites();
  CHECK(after.made - before.made >= 3);  // 124 KiB pieces
  CHECK(after.made - before.made < (after.asked - before.asked) / 10);
  std::string crash = t.dir + "/crash";
  std::filesystem::create_directory(crash);
  std::filesystem::copy_file(t.path(), crash + "/t.db");
  std::filesystem::copy_file(t.path() + "-wal", crash + "/t.db-wal");
  Plain image(crash + "/t.db");
  CHECK(image.One("PRAGMA integrity_check") == "ok");
  CHECK(image.One("SELECT COUNT(*) || ',' || SUM(c) FROM t") ==
        "400," + std::to_string(31 * (399 * 400 / 2)));
}

TEST_CASE("a rollback in exclusive locking mode leaves nothing to land after leaving it",
          "[store]") {
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/t.db";
  {
    Through ours(path, "");
    OneRow(ours);
    ours.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
    // Exclusive mode keeps the WAL write lock in heap memory: no shared-memory unlock ends
    // the transaction, the database file's unlock on leaving the mode does.
    ours.Exec("PRAGMA cache_size=-64; PRAGMA locking_mode=EXCLUSIVE");
    ours.Exec("BEGIN; WITH RECURSIVE c(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM c WHERE i < 400) "
              "INSERT INTO t SELECT i, randomblob(400) FROM c");
    ours.Exec("ROLLBACK");
    ours.Exec("PRAGMA locking_mode=NORMAL; SELECT COUNT(*) FROM t");
    Plain other(path);
    REQUIRE(other.One("INSERT INTO t VALUES (1000, 'other') RETURNING id") == "1000");
    REQUIRE(other.One("INSERT INTO t VALUES (1001, 'other') RETURNING id") == "1001");
    CHECK(One(ours.db, "SELECT COUNT(*) || ',' || MAX(id) FROM t") == "3,1001");
  }
  Plain reopened(path);
  CHECK(reopened.One("PRAGMA integrity_check") == "ok");
  CHECK(reopened.One("SELECT COUNT(*) || ',' || MAX(id) FROM t") == "3,1001");
}

namespace {

// A file system that is full on demand: SQLite's default VFS, except that while full_writes is
// set every write to a WAL file fails as a write on a full disk does (SQLITE_FULL, ENOSPC).
namespace full_disk {
sqlite3_vfs* unix_vfs = nullptr;
sqlite3_vfs vfs;
sqlite3_io_methods methods;
int full_writes = 0;  // how many writes to a WAL file fail next
int failed = 0;       // how many did
struct File {
  sqlite3_file base;
  sqlite3_file* real;
  bool wal;
};
sqlite3_file* Real(sqlite3_file* p) { return reinterpret_cast<File*>(p)->real; }

int Write(sqlite3_file* p, const void* d, int n, sqlite3_int64 o) {
  if (reinterpret_cast<File*>(p)->wal && full_writes > 0) {
    --full_writes;
    ++failed;
    return SQLITE_FULL;
  }
  return Real(p)->pMethods->xWrite(Real(p), d, n, o);
}

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* p, int flags, int* out) {
  auto* f = reinterpret_cast<File*>(p);
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->wal = (flags & SQLITE_OPEN_WAL) != 0;
  p->pMethods = nullptr;
  int rc = unix_vfs->xOpen(unix_vfs, name, f->real, flags, out);
  if (rc != SQLITE_OK || f->real->pMethods == nullptr) {
    if (f->real->pMethods) f->real->pMethods->xClose(f->real);
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  // Every method but the write forwards to the default VFS's file (version 3: shared memory).
  methods = *f->real->pMethods;
  methods.xClose = [](sqlite3_file* q) { return Real(q)->pMethods->xClose(Real(q)); };
  methods.xRead = [](sqlite3_file* q, void* d, int n, sqlite3_int64 o) {
    return Real(q)->pMethods->xRead(Real(q), d, n, o);
  };
  methods.xWrite = Write;
  methods.xTruncate = [](sqlite3_file* q, sqlite3_int64 s) {
    return Real(q)->pMethods->xTruncate(Real(q), s);
  };
  methods.xSync = [](sqlite3_file* q, int fl) { return Real(q)->pMethods->xSync(Real(q), fl); };
  methods.xFileSize = [](sqlite3_file* q, sqlite3_int64* s) {
    return Real(q)->pMethods->xFileSize(Real(q), s);
  };
  methods.xLock = [](sqlite3_file* q, int l) { return Real(q)->pMethods->xLock(Real(q), l); };
  methods.xUnlock = [](sqlite3_file* q, int l) { return Real(q)->pMethods->xUnlock(Real(q), l); };
  methods.xCheckReservedLock = [](sqlite3_file* q, int* o) {
    return Real(q)->pMethods->xCheckReservedLock(Real(q), o);
  };
  methods.xFileControl = [](sqlite3_file* q, int op, void* a) {
    return Real(q)->pMethods->xFileControl(Real(q), op, a);
  };
  methods.xSectorSize = [](sqlite3_file* q) { return Real(q)->pMethods->xSectorSize(Real(q)); };
  methods.xDeviceCharacteristics = [](sqlite3_file* q) {
    return Real(q)->pMethods->xDeviceCharacteristics(Real(q));
  };
  methods.xShmMap = [](sqlite3_file* q, int pg, int sz, int ext, void volatile** o) {
    return Real(q)->pMethods->xShmMap(Real(q), pg, sz, ext, o);
  };
  methods.xShmLock = [](sqlite3_file* q, int off, int n, int fl) {
    return Real(q)->pMethods->xShmLock(Real(q), off, n, fl);
  };
  methods.xShmBarrier = [](sqlite3_file* q) { Real(q)->pMethods->xShmBarrier(Real(q)); };
  methods.xShmUnmap = [](sqlite3_file* q, int del) {
    return Real(q)->pMethods->xShmUnmap(Real(q), del);
  };
  methods.xFetch = [](sqlite3_file* q, sqlite3_int64 o, int n, void** out_p) {
    return Real(q)->pMethods->xFetch(Real(q), o, n, out_p);
  };
  methods.xUnfetch = [](sqlite3_file* q, sqlite3_int64 o, void* ptr) {
    return Real(q)->pMethods->xUnfetch(Real(q), o, ptr);
  };
  p->pMethods = &methods;
  return SQLITE_OK;
}

// Makes this SQLite's default VFS, so the WAL VFS registered after it writes through it.
void Install() {
  unix_vfs = sqlite3_vfs_find(nullptr);
  vfs = *unix_vfs;
  vfs.pNext = nullptr;
  vfs.zName = "full-disk-test";
  vfs.szOsFile = static_cast<int>(sizeof(File)) + unix_vfs->szOsFile;
  vfs.xOpen = Open;
  REQUIRE(sqlite3_vfs_register(&vfs, 1) == SQLITE_OK);
}
}  // namespace full_disk

}  // namespace

// Hidden from the unit run: its own ctest entry runs it in a process where the WAL VFS has not
// been registered yet, so that it wraps the full disk above.
TEST_CASE("a full disk while a spilled transaction reads its own frames back fails the whole "
          "transaction",
          "[.][wal-full-disk]") {
  // The WAL VFS wraps whatever SQLite's default is when it is first used: not yet, here.
  REQUIRE(sqlite3_vfs_find("conclave-wal") == nullptr);
  full_disk::Install();
  REQUIRE(sqlite3_vfs_find(store::WalWriteVfsName()) != nullptr);
  conclave::testing::TempDir tmp;
  std::string path = tmp.dir + "/t.db";
  {
    Through ours(path, "PRAGMA cache_size=-64; PRAGMA cache_spill=ON;");
    ours.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, u INTEGER UNIQUE, v BLOB)");
    Plain other(path);
    // ~200 KiB in an open transaction with a 64 KiB cache: pages spill as WAL frames, which
    // the VFS holds in its buffer (under 1 MiB) without writing them.
    ours.Exec("BEGIN; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
              "WHERE i < 600) INSERT INTO t SELECT i, i, randomblob(300) FROM c");
    // An update over a UNIQUE column (a statement journal) reads spilled pages back: the
    // buffer must go out first, onto a disk that is now full.
    full_disk::full_writes = 1000;
    char* err = nullptr;
    int update = sqlite3_exec(ours.db, "UPDATE t SET u = u + 100000", nullptr, nullptr, &err);
    sqlite3_free(err);
    full_disk::full_writes = 0;
    REQUIRE(full_disk::failed > 0);  // the disk did refuse a write
    // An I/O error, not the write's SQLITE_FULL (which would undo only the statement): SQLite
    // rolls the whole transaction back.
    CHECK(update != SQLITE_OK);
    CHECK(sqlite3_extended_errcode(ours.db) == SQLITE_IOERR_WRITE);
    CHECK(sqlite3_get_autocommit(ours.db));
    // Whatever happened to the statement, the transaction cannot commit the frames it lost.
    if (!sqlite3_get_autocommit(ours.db)) {
      CHECK(sqlite3_exec(ours.db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK);
      if (!sqlite3_get_autocommit(ours.db)) ours.Exec("ROLLBACK");
    }
    CHECK(other.One("PRAGMA integrity_check") == "ok");
    CHECK(other.One("SELECT COUNT(*) FROM t") == "0");
    // With room on the disk again, the same connection writes and commits.
    ours.Exec("INSERT INTO t VALUES (1, 1, randomblob(300))");
    CHECK(other.One("SELECT COUNT(*) FROM t") == "1");
    CHECK(One(ours.db, "SELECT COUNT(*) FROM t") == "1");
  }
  Plain reopened(path);
  CHECK(reopened.One("PRAGMA integrity_check") == "ok");
  CHECK(reopened.One("SELECT COUNT(*) FROM t") == "1");
}
