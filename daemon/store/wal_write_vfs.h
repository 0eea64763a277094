// WalWriteVfs: a thin SQLite VFS over the default ("unix") one, in its process-exclusive
// flavour "unix-excl" (no other process opens the database while conclaved has it open, and
// no lock is a system call: wal_write_vfs.cpp, Register), that writes a transaction's WAL
// frames with one system call instead of two per page. SQLite writes each frame as a 24-byte
// header and then the page, each its own pwrite; a Send's commit is about 7 frames, a
// dispatch's about 15. Here the frames gather in a buffer and go to the file in one write when
// the commit frame (a header whose "database size" field is set) has its page written.
//
// Nothing is acknowledged earlier than before, and nothing another connection can see is
// missing from the file:
// - the buffer is written before COMMIT's frames are published: the commit frame is the last
//   frame SQLite writes, and its wal-index header is updated only after it returns; from a
//   commit header on, every write goes out at once until the next transaction's first frame;
// - any other use of the WAL file (read, sync, truncate, size, file control, close) writes the
//   buffer first; a commit header with no frames before it (SQLite rewriting checksums in
//   place after a cache spill) is written at once;
// - frames of a transaction that rolled back (spilled from the page cache, never published)
//   are dropped when the connection's write transaction ends (the WAL write lock's release,
//   or in exclusive locking mode the database file's unlock), so they cannot land later over
//   frames another writer committed at the same offsets;
// - a failed write reports its error (SQLITE_FULL on a full disk) from the commit frame's
//   write, so COMMIT fails as it did before; frames that could not be written out before some
//   other use of the file (a spilled transaction reading its own frames back) fail that use
//   with an I/O error, which rolls the whole transaction back, and until the WAL write lock is
//   next released every write fails too, so nothing can publish frames that were lost (in
//   exclusive locking mode, where that lock is never released, until the connection leaves the
//   mode);
// - a crash loses only frames of a transaction whose COMMIT never returned, which SQLite's own
//   WAL recovery ignores anyway (the commit frame is what makes a transaction);
// - a database opened without power-safe overwrite (psow=0), where synchronous=FULL pads a
//   commit and syncs in the middle of a frame, has its WAL written exactly as SQLite asks.
// The database file is wrapped only to see a write transaction end; its WAL file is linked to
// it when opened (sqlite3_database_file_object). Journals and temporary files are the default
// VFS's own.
// Thread-safety: both files belong to one connection, used by one thread at a time (SQLite's
// rule); registration is once per process.
#pragma once

#include <cstdint>

namespace conclave::store {

// Registers the VFS on first use; returns its name for sqlite3_open_v2.
const char* WalWriteVfsName();

// Process-wide counts of WAL writes asked for by SQLite and made to the file (tests, bench).
struct WalWriteCounts {
  uint64_t asked = 0;    // writes SQLite asked of a WAL file
  uint64_t made = 0;     // writes made to the file
  uint64_t dropped = 0;  // buffers of rolled-back frames dropped at the write lock's release
};
WalWriteCounts WalWrites();

}  // namespace conclave::store
