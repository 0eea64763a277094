// Transaction: the SQL half of group commit. One BEGIN IMMEDIATE per loop turn (another after a
// failed first write), a SAVEPOINT per request after the first inside it (so a failing request
// rolls back alone; a failing first one rolls the whole transaction back), one COMMIT. A failed
// COMMIT is rolled back and classified: kFull (SQLITE_FULL — the disk is full; SQLite rolled the
// transaction back, so the outcome is known: nothing of it was written) or kUnknown (any other
// error: whether it reached the disk is not known, so the caller must stop writing).
// The service half (which requests share a commit, acknowledgements after it) is
// service/commit_batcher. Loop thread only.
#pragma once

#include <string>

#include "store/database.h"

namespace conclave::store {

enum class CommitOutcome { kCommitted, kFull, kUnknown };

struct CommitResult {
  CommitOutcome outcome = CommitOutcome::kCommitted;
  std::string error;  // SQLite's message when not committed
  bool ok() const { return outcome == CommitOutcome::kCommitted; }
};

// True when e means the disk (or the database's size limit) is full.
bool IsDiskFull(const StoreError& e);

class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) {}

  bool open() const { return open_; }
  // Whether SQLite still has the transaction open (it rolls one back by itself after some
  // errors); no system call.
  bool active() const { return db_.InTransaction(); }
  void Begin();              // BEGIN IMMEDIATE; throws StoreError
  void OpenSavepoint();      // throws StoreError
  void ReleaseSavepoint();   // throws StoreError
  void RollbackSavepoint();  // rolls the request back; throws StoreError
  CommitResult Commit();     // never throws; rolls back on failure
  void Abandon();            // rolls the whole transaction back; never throws
  // Rolls the whole transaction back (nothing to do when SQLite already has); throws
  // StoreError when ROLLBACK fails, the transaction then still open.
  void Rollback();
  // Writes the smallest change that needs new space on disk, in its own transaction: true
  // once a write can land again (the disk-full probe).
  bool ProbeWritable(std::string* error);

 private:
  Database& db_;
  bool open_ = false;
};

}  // namespace conclave::store
