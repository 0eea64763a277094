#include "store/wal_write_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

namespace conclave::store {
namespace {

constexpr const char* kName = "conclave-wal";
// A transaction bigger than this (a spill, a migration) is written in pieces of this size.
constexpr size_t kMaxBuffered = 1 << 20;
constexpr int kFrameHeader = 24;
// The unix VFS writes at most 128 KiB - 1 bytes per call (os_unix.c masks the length with
// 0x1ffff): a bigger buffer goes out in pieces of this size.
constexpr size_t kMaxWrite = 124 * 1024;
// wal.c: the WAL write lock is shared-memory lock slot 0.
constexpr int kWalWriteLock = 0;

sqlite3_vfs* g_base = nullptr;
sqlite3_vfs g_vfs;
sqlite3_io_methods g_wal_methods, g_db_methods;
std::atomic<uint64_t> g_asked{0}, g_made{0}, g_dropped{0};

// Both kinds of wrapped file start like this: our methods, then the default VFS's file.
struct Wrapped {
  sqlite3_file base;
  sqlite3_file* real;  // in the same allocation, right after the wrapper
};

struct DbFile;

struct WalFile {
  Wrapped w;
  bool pass_through;   // no power-safe overwrite: SQLite pads and syncs mid-frame; no buffer
  bool write_through;  // since the last commit header: every write goes out at once
  sqlite3_int64 buf_off;
  std::string* buf;  // frames not yet written
  // Set when buffered frames could not be written out before a use of the file that is not a
  // write (FlushBefore): until the WAL write lock is next released every write fails, so no
  // COMMIT can publish the frames that were lost. SQLite rolls such a transaction back at once
  // (the use failed with an I/O error); this is the guard behind that. In exclusive locking mode
  // that lock is never released, and it lasts until the connection leaves the mode.
  int lost;
  DbFile* db;        // the same connection's database file (null: not opened through here)
};

struct DbFile {
  Wrapped w;
  WalFile* wal;  // the same connection's WAL file while it is open
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<Wrapped*>(f)->real; }
WalFile* Wal(sqlite3_file* f) { return reinterpret_cast<WalFile*>(f); }

int Flush(WalFile* f) {
  if (f->buf->empty()) return SQLITE_OK;
  int rc = SQLITE_OK;
  for (size_t done = 0; done < f->buf->size() && rc == SQLITE_OK; done += kMaxWrite) {
    const size_t n = std::min(kMaxWrite, f->buf->size() - done);
    rc = f->w.real->pMethods->xWrite(f->w.real, f->buf->data() + done, static_cast<int>(n),
                                     f->buf_off + static_cast<sqlite3_int64>(done));
    g_made.fetch_add(1, std::memory_order_relaxed);
  }
  f->buf->clear();
  return rc;
}

// For a method that is not a write: the buffer goes out first. If it cannot, the error is an
// I/O error whatever the write said. SQLITE_FULL from a read would roll back only the statement
// that read, and the transaction would go on without the frames that were lost. An I/O error
// rolls the whole transaction back. (A write whose own flush fails returns the write's error:
// SQLite then ends the transaction itself, a spill's pager going into its error state.)
int FlushBefore(WalFile* f) {
  if (Flush(f) == SQLITE_OK) return SQLITE_OK;
  f->lost = SQLITE_IOERR_WRITE;
  return SQLITE_IOERR_WRITE;
}

uint32_t BigEndian32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

int WalWrite(sqlite3_file* p, const void* data, int n, sqlite3_int64 off) try {
  WalFile* f = Wal(p);
  g_asked.fetch_add(1, std::memory_order_relaxed);
  if (f->pass_through) {
    g_made.fetch_add(1, std::memory_order_relaxed);
    return f->w.real->pMethods->xWrite(f->w.real, data, n, off);
  }
  if (f->lost != SQLITE_OK) return f->lost;
  std::string& buf = *f->buf;
  const auto* bytes = static_cast<const char*>(data);
  bool commit_header = false;
  if (n == kFrameHeader) {
    // Bytes 4-7 of a frame header: the database size after a commit, 0 for other frames.
    // From a commit header on, every write goes out at once until the next transaction's
    // first header.
    commit_header = BigEndian32(bytes + 4) != 0;
    f->write_through = commit_header;
  }
  const sqlite3_int64 end = f->buf_off + static_cast<sqlite3_int64>(buf.size());
  bool followed_by_page = false;  // a commit header appended after this transaction's frames
  if (!buf.empty() && off >= f->buf_off && off + n <= end) {
    std::memcpy(buf.data() + (off - f->buf_off), bytes, static_cast<size_t>(n));  // a rewrite
  } else {
    if (!buf.empty() && off != end) {
      if (int rc = Flush(f); rc != SQLITE_OK) return rc;
    }
    if (buf.empty()) f->buf_off = off;
    buf.append(bytes, static_cast<size_t>(n));
    followed_by_page = commit_header && buf.size() > static_cast<size_t>(n);
  }
  // A commit header appended after this transaction's other frames is followed by its page:
  // the two go out with them. One written alone, or over bytes already buffered, may be SQLite
  // rewriting checksums in place after a cache spill, with no page to follow: it goes out now.
  if (followed_by_page) return SQLITE_OK;
  if (f->write_through || buf.size() >= kMaxBuffered) return Flush(f);
  return SQLITE_OK;
} catch (const std::bad_alloc&) {
  return SQLITE_IOERR_NOMEM;
}

int WalClose(sqlite3_file* p) {
  WalFile* f = Wal(p);
  int rc = Flush(f);
  if (f->db) f->db->wal = nullptr;
  int rc2 = f->w.real->pMethods->xClose(f->w.real);
  delete f->buf;
  return rc != SQLITE_OK ? rc : rc2;
}

// Any other use of the WAL file sees the file as SQLite wrote it: the buffer goes out first.
int WalRead(sqlite3_file* p, void* data, int n, sqlite3_int64 off) {
  if (int rc = FlushBefore(Wal(p)); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xRead(Real(p), data, n, off);
}
int WalTruncate(sqlite3_file* p, sqlite3_int64 size) {
  if (int rc = FlushBefore(Wal(p)); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xTruncate(Real(p), size);
}
int WalSync(sqlite3_file* p, int flags) {
  if (int rc = FlushBefore(Wal(p)); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xSync(Real(p), flags);
}
int WalFileSize(sqlite3_file* p, sqlite3_int64* size) {
  if (int rc = FlushBefore(Wal(p)); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xFileSize(Real(p), size);
}
int WalFileControl(sqlite3_file* p, int op, void* arg) {
  if (int rc = FlushBefore(Wal(p)); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xFileControl(Real(p), op, arg);
}

// Plain forwarding, for both kinds.
int Close(sqlite3_file* p) {
  DbFile* d = reinterpret_cast<DbFile*>(p);
  if (d->wal) d->wal->db = nullptr;  // SQLite closes the WAL first; this is a guard
  return Real(p)->pMethods->xClose(Real(p));
}
int Read(sqlite3_file* p, void* d, int n, sqlite3_int64 o) {
  return Real(p)->pMethods->xRead(Real(p), d, n, o);
}
int Write(sqlite3_file* p, const void* d, int n, sqlite3_int64 o) {
  return Real(p)->pMethods->xWrite(Real(p), d, n, o);
}
int Truncate(sqlite3_file* p, sqlite3_int64 s) { return Real(p)->pMethods->xTruncate(Real(p), s); }
int Sync(sqlite3_file* p, int f) { return Real(p)->pMethods->xSync(Real(p), f); }
int FileSize(sqlite3_file* p, sqlite3_int64* s) {
  return Real(p)->pMethods->xFileSize(Real(p), s);
}
int Lock(sqlite3_file* p, int l) { return Real(p)->pMethods->xLock(Real(p), l); }
int Unlock(sqlite3_file* p, int l) { return Real(p)->pMethods->xUnlock(Real(p), l); }

// What a transaction that rolled back left buffered (frames spilled from the page cache, never
// published) is dropped when the connection's write transaction ends, so it can never be
// written later over frames another writer commits at the same offsets. A committed
// transaction leaves nothing buffered.
void DropRolledBack(sqlite3_file* db_file) {
  WalFile* wal = reinterpret_cast<DbFile*>(db_file)->wal;
  if (!wal) return;
  wal->lost = SQLITE_OK;  // the transaction that lost frames has ended (it cannot commit)
  if (!wal->buf->empty()) {
    wal->buf->clear();
    g_dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

// Database file: the end of a write transaction is the release of the WAL write lock (slot
// 0) or, in exclusive locking mode (where that lock lives in heap memory), the unlock of the
// database file when the connection leaves that mode.
int DbShmLock(sqlite3_file* p, int offset, int n, int flags) {
  if (offset == kWalWriteLock && flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE)) {
    DropRolledBack(p);
  }
  return Real(p)->pMethods->xShmLock(Real(p), offset, n, flags);
}
int DbUnlock(sqlite3_file* p, int level) {
  DropRolledBack(p);
  return Real(p)->pMethods->xUnlock(Real(p), level);
}
int CheckReservedLock(sqlite3_file* p, int* o) {
  return Real(p)->pMethods->xCheckReservedLock(Real(p), o);
}
int FileControl(sqlite3_file* p, int op, void* a) {
  return Real(p)->pMethods->xFileControl(Real(p), op, a);
}
int SectorSize(sqlite3_file* p) { return Real(p)->pMethods->xSectorSize(Real(p)); }
int DeviceCharacteristics(sqlite3_file* p) {
  return Real(p)->pMethods->xDeviceCharacteristics(Real(p));
}
int ShmMap(sqlite3_file* p, int pg, int sz, int ext, void volatile** o) {
  return Real(p)->pMethods->xShmMap(Real(p), pg, sz, ext, o);
}
void ShmBarrier(sqlite3_file* p) { Real(p)->pMethods->xShmBarrier(Real(p)); }
int ShmUnmap(sqlite3_file* p, int del) { return Real(p)->pMethods->xShmUnmap(Real(p), del); }
int Fetch(sqlite3_file* p, sqlite3_int64 o, int n, void** out) {
  return Real(p)->pMethods->xFetch(Real(p), o, n, out);
}
int Unfetch(sqlite3_file* p, sqlite3_int64 o, void* ptr) {
  return Real(p)->pMethods->xUnfetch(Real(p), o, ptr);
}

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* p, int flags, int* out_flags) {
  const bool wal = (flags & SQLITE_OPEN_WAL) != 0;
  if (!wal && (flags & SQLITE_OPEN_MAIN_DB) == 0) {
    // Journals, temporary files: the default VFS's own (szOsFile covers them).
    return g_base->xOpen(g_base, name, p, flags, out_flags);
  }
  auto* w = reinterpret_cast<Wrapped*>(p);
  w->real = reinterpret_cast<sqlite3_file*>((wal ? sizeof(WalFile) : sizeof(DbFile)) +
                                            reinterpret_cast<char*>(p));
  p->pMethods = nullptr;
  int rc = g_base->xOpen(g_base, name, w->real, flags, out_flags);
  if (rc != SQLITE_OK || w->real->pMethods == nullptr) {
    // The default VFS may leave methods to close with even on failure.
    if (w->real->pMethods) w->real->pMethods->xClose(w->real);
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  if (!wal) {
    reinterpret_cast<DbFile*>(p)->wal = nullptr;
    p->pMethods = &g_db_methods;
    return SQLITE_OK;
  }
  WalFile* f = Wal(p);
  // Without power-safe overwrite (psow=0), synchronous=FULL pads a commit to a sector
  // boundary and syncs in the middle of a frame: such a WAL is written as SQLite asks.
  f->pass_through = !sqlite3_uri_boolean(name, "psow", 1) ||
                    (w->real->pMethods->xDeviceCharacteristics(w->real) &
                     SQLITE_IOCAP_POWERSAFE_OVERWRITE) == 0;
  f->write_through = false;
  f->buf_off = 0;
  f->lost = SQLITE_OK;
  f->db = nullptr;
  try {
    f->buf = new std::string();
  } catch (const std::bad_alloc&) {
    w->real->pMethods->xClose(w->real);
    return SQLITE_NOMEM;
  }
  // The database file of the same connection (SQLite opens it first).
  sqlite3_file* db_file = sqlite3_database_file_object(name);
  if (db_file && db_file->pMethods == &g_db_methods) {
    f->db = reinterpret_cast<DbFile*>(db_file);
    f->db->wal = f;
  } else {
    f->pass_through = true;  // nothing would drop a rolled-back transaction's frames
  }
  p->pMethods = &g_wal_methods;
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_base->xDelete(g_base, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_base->xAccess(g_base, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_base->xFullPathname(g_base, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_base->xDlOpen(g_base, name); }
void DlError(sqlite3_vfs*, int n, char* out) { g_base->xDlError(g_base, n, out); }
void (*DlSym(sqlite3_vfs*, void* h, const char* sym))(void) {
  return g_base->xDlSym(g_base, h, sym);
}
void DlClose(sqlite3_vfs*, void* h) { g_base->xDlClose(g_base, h); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int Sleep(sqlite3_vfs*, int us) { return g_base->xSleep(g_base, us); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_base->xCurrentTime(g_base, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return g_base->xGetLastError ? g_base->xGetLastError(g_base, n, out) : 0;
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_base->xCurrentTimeInt64(g_base, out);
}

void Register() {
  // SQLite's own "unix" VFS in its process-exclusive flavour ("unix-excl"): the first lock
  // on a database takes a write lock on the file for the whole process, held until the last
  // connection closes, and the wal-index lives in the heap instead of the -shm file. The
  // daemon's connections (loop, checkpointer, snapshot reader) still share the database as
  // before, through SQLite's in-process lock table, but no lock is a system call any more
  // (four fcntl calls a commit), and no other process opens the database while conclaved
  // runs ("database is locked"). A test that made another VFS the default keeps it.
  sqlite3_vfs* def = sqlite3_vfs_find(nullptr);
  g_base = def && std::strcmp(def->zName, "unix") == 0 ? sqlite3_vfs_find("unix-excl") : def;
  if (!g_base || g_base->iVersion < 2 || !g_base->xCurrentTimeInt64) std::abort();
  g_db_methods = sqlite3_io_methods{3, Close, Read, Write, Truncate, Sync, FileSize, Lock, DbUnlock,
                                    CheckReservedLock, FileControl, SectorSize,
                                    DeviceCharacteristics, ShmMap, DbShmLock, ShmBarrier,
                                    ShmUnmap, Fetch, Unfetch};
  // SQLite never maps or shares memory through a WAL file: version 1 methods.
  g_wal_methods = sqlite3_io_methods{1, WalClose, WalRead, WalWrite, WalTruncate, WalSync,
                                     WalFileSize, Lock, Unlock, CheckReservedLock,
                                     WalFileControl, SectorSize, DeviceCharacteristics,
                                     nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = 2;
  g_vfs.szOsFile = static_cast<int>(std::max(sizeof(WalFile), sizeof(DbFile))) + g_base->szOsFile;
  g_vfs.mxPathname = g_base->mxPathname;
  g_vfs.zName = kName;
  g_vfs.xOpen = Open;
  g_vfs.xDelete = Delete;
  g_vfs.xAccess = Access;
  g_vfs.xFullPathname = FullPathname;
  g_vfs.xDlOpen = DlOpen;
  g_vfs.xDlError = DlError;
  g_vfs.xDlSym = DlSym;
  g_vfs.xDlClose = DlClose;
  g_vfs.xRandomness = Randomness;
  g_vfs.xSleep = Sleep;
  g_vfs.xCurrentTime = CurrentTime;
  g_vfs.xGetLastError = GetLastError;
  g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  if (sqlite3_vfs_register(&g_vfs, 0) != SQLITE_OK) std::abort();
}

}  // namespace

const char* WalWriteVfsName() {
  static std::once_flag once;
  std::call_once(once, Register);
  return kName;
}

WalWriteCounts WalWrites() {
  return {g_asked.load(std::memory_order_relaxed), g_made.load(std::memory_order_relaxed),
          g_dropped.load(std::memory_order_relaxed)};
}

}  // namespace conclave::store
