// WalWriteVfs: a thin SQLite VFS over the default ("unix") one that writes a transaction's WAL
// frames with one system call instead of two per page. SQLite writes each frame as a 24-byte
// header and then the page, each its own pwrite; a Send's commit is about 7 frames, a
// dispatch's about 15. Here the frames gather in a buffer and go to the file in one write when
// the commit frame (a header whose "database size" field is set) has its page written.
//
// Nothing is acknowledged earlier than before, and nothing another connection can see is
// missing from the file:
// - the buffer is written before COMMIT's frames are published: the commit frame is the last
//   frame SQLite writes, and its wal-index header is updated only after it returns;
// - any other use of the WAL file (read, sync, truncate, size, file control, close) writes the
//   buffer first; a commit header with no frames before it (SQLite rewriting checksums in
//   place after a cache spill) is written at once;
// - a failed write reports its error (SQLITE_FULL on a full disk) from the commit frame's
//   write, so COMMIT fails as it did before;
// - a crash loses only frames of a transaction whose COMMIT never returned, which SQLite's own
//   WAL recovery ignores anyway (the commit frame is what makes a transaction).
// Files other than WAL files are the default VFS's own: their calls never pass through here.
// Thread-safety: a file belongs to one connection, used by one thread at a time (SQLite's
// rule); the registration is once per process.
#pragma once

#include <cstdint>

namespace conclave::store {

// Registers the VFS on first use; returns its name for sqlite3_open_v2.
const char* WalWriteVfsName();

// Process-wide counts of WAL writes asked for by SQLite and made to the file (tests, bench).
struct WalWriteCounts {
  uint64_t asked = 0;
  uint64_t made = 0;
};
WalWriteCounts WalWrites();

}  // namespace conclave::store
