#include "store/wal_write_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
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

sqlite3_vfs* g_base = nullptr;
sqlite3_vfs g_vfs;
sqlite3_io_methods g_methods;
std::atomic<uint64_t> g_asked{0}, g_made{0};

struct File {
  sqlite3_file base;   // methods: g_methods
  sqlite3_file* real;  // the default VFS's file, in the same allocation after this struct
  bool flush_after_next;  // the last write was a commit frame's header: flush after its page
  sqlite3_int64 buf_off;
  std::string* buf;  // WAL files only: frames not yet written
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

int Flush(File* f) {
  if (!f->buf || f->buf->empty()) return SQLITE_OK;
  int rc = SQLITE_OK;
  for (size_t done = 0; done < f->buf->size() && rc == SQLITE_OK; done += kMaxWrite) {
    const size_t n = std::min(kMaxWrite, f->buf->size() - done);
    rc = f->real->pMethods->xWrite(f->real, f->buf->data() + done, static_cast<int>(n),
                                   f->buf_off + static_cast<sqlite3_int64>(done));
    g_made.fetch_add(1, std::memory_order_relaxed);
  }
  f->buf->clear();
  f->flush_after_next = false;
  return rc;
}

int FlushFile(sqlite3_file* p) { return Flush(reinterpret_cast<File*>(p)); }

uint32_t BigEndian32(const void* p) {
  const auto* b = static_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

int Write(sqlite3_file* p, const void* data, int n, sqlite3_int64 off) {
  File* f = reinterpret_cast<File*>(p);
  g_asked.fetch_add(1, std::memory_order_relaxed);
  std::string& buf = *f->buf;
  const auto* bytes = static_cast<const char*>(data);
  const sqlite3_int64 end = f->buf_off + static_cast<sqlite3_int64>(buf.size());
  const bool was_empty = buf.empty();
  if (!buf.empty() && off >= f->buf_off && off + n <= end) {
    std::memcpy(buf.data() + (off - f->buf_off), bytes, static_cast<size_t>(n));  // a rewrite
  } else {
    if (!buf.empty() && off != end) {
      if (int rc = Flush(f); rc != SQLITE_OK) return rc;
    }
    if (buf.empty()) f->buf_off = off;
    buf.append(bytes, static_cast<size_t>(n));
  }
  if (n == kFrameHeader) {
    // Bytes 4-7 of a frame header: the database size after a commit, 0 for other frames. A
    // commit header written after this transaction's other frames is followed by its page;
    // one written alone may be SQLite rewriting checksums in place (after a cache spill),
    // with no page to follow: it goes to the file now.
    const bool commit = BigEndian32(bytes + 4) != 0;
    int rc = commit && was_empty ? Flush(f) : SQLITE_OK;
    f->flush_after_next = commit;  // a page that follows still goes out at once
    return rc;
  }
  if (f->flush_after_next || buf.size() >= kMaxBuffered) return Flush(f);
  return SQLITE_OK;
}

int Close(sqlite3_file* p) {
  File* f = reinterpret_cast<File*>(p);
  int rc = Flush(f);
  int rc2 = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
  delete f->buf;
  f->buf = nullptr;
  return rc != SQLITE_OK ? rc : rc2;
}

int Read(sqlite3_file* p, void* data, int n, sqlite3_int64 off) {
  if (int rc = FlushFile(p); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xRead(Real(p), data, n, off);
}
int Truncate(sqlite3_file* p, sqlite3_int64 size) {
  if (int rc = FlushFile(p); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xTruncate(Real(p), size);
}
int Sync(sqlite3_file* p, int flags) {
  if (int rc = FlushFile(p); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xSync(Real(p), flags);
}
int FileSize(sqlite3_file* p, sqlite3_int64* size) {
  if (int rc = FlushFile(p); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xFileSize(Real(p), size);
}
int Lock(sqlite3_file* p, int level) { return Real(p)->pMethods->xLock(Real(p), level); }
int Unlock(sqlite3_file* p, int level) { return Real(p)->pMethods->xUnlock(Real(p), level); }
int CheckReservedLock(sqlite3_file* p, int* out) {
  return Real(p)->pMethods->xCheckReservedLock(Real(p), out);
}
int FileControl(sqlite3_file* p, int op, void* arg) {
  if (int rc = FlushFile(p); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xFileControl(Real(p), op, arg);
}
int SectorSize(sqlite3_file* p) { return Real(p)->pMethods->xSectorSize(Real(p)); }
int DeviceCharacteristics(sqlite3_file* p) {
  return Real(p)->pMethods->xDeviceCharacteristics(Real(p));
}
int ShmMap(sqlite3_file* p, int page, int size, int extend, void volatile** out) {
  return Real(p)->pMethods->xShmMap(Real(p), page, size, extend, out);
}
// A WAL file has no shared memory; these only forward.
int ShmLock(sqlite3_file* p, int offset, int n, int flags) {
  return Real(p)->pMethods->xShmLock(Real(p), offset, n, flags);
}
void ShmBarrier(sqlite3_file* p) { Real(p)->pMethods->xShmBarrier(Real(p)); }
int ShmUnmap(sqlite3_file* p, int del) { return Real(p)->pMethods->xShmUnmap(Real(p), del); }
int Fetch(sqlite3_file* p, sqlite3_int64 off, int n, void** out) {
  if (int rc = FlushFile(p); rc != SQLITE_OK) return rc;
  return Real(p)->pMethods->xFetch(Real(p), off, n, out);
}
int Unfetch(sqlite3_file* p, sqlite3_int64 off, void* ptr) {
  return Real(p)->pMethods->xUnfetch(Real(p), off, ptr);
}

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* p, int flags, int* out_flags) {
  // Any other file is the default VFS's own (szOsFile covers it): its calls go straight there.
  if ((flags & SQLITE_OPEN_WAL) == 0) return g_base->xOpen(g_base, name, p, flags, out_flags);
  File* f = reinterpret_cast<File*>(p);
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->flush_after_next = false;
  f->buf_off = 0;
  f->buf = nullptr;
  p->pMethods = nullptr;
  int rc = g_base->xOpen(g_base, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK || f->real->pMethods == nullptr) {
    // The default VFS may have left methods to close with even on failure.
    if (f->real->pMethods) f->real->pMethods->xClose(f->real);
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  f->buf = new std::string();
  p->pMethods = &g_methods;
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
  g_base = sqlite3_vfs_find(nullptr);
  if (!g_base || g_base->iVersion < 2 || !g_base->xCurrentTimeInt64) std::abort();
  g_methods = sqlite3_io_methods{3,        Close,       Read,        Write,
                                 Truncate, Sync,        FileSize,    Lock,
                                 Unlock,   CheckReservedLock, FileControl, SectorSize,
                                 DeviceCharacteristics, ShmMap, ShmLock, ShmBarrier,
                                 ShmUnmap, Fetch,       Unfetch};
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = 2;
  g_vfs.szOsFile = static_cast<int>(sizeof(File)) + g_base->szOsFile;
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
  return {g_asked.load(std::memory_order_relaxed), g_made.load(std::memory_order_relaxed)};
}

}  // namespace conclave::store
