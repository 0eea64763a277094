#include "store/transaction.h"

namespace conclave::store {

bool IsDiskFull(const StoreError& e) { return (e.sqlite_code() & 0xff) == SQLITE_FULL; }

// Transaction control runs through the Database's cached statements (no compile per use).
void Transaction::Begin() {
  db_.Begin();
  open_ = true;
}

void Transaction::OpenSavepoint() { db_.Savepoint(); }

void Transaction::ReleaseSavepoint() { db_.Release(); }

void Transaction::RollbackSavepoint() {
  db_.RollbackTo();
  db_.Release();
}

CommitResult Transaction::Commit() {
  CommitResult r;
  if (!open_) return r;
  open_ = false;
  try {
    db_.Commit();
    return r;
  } catch (const StoreError& e) {
    r.outcome = IsDiskFull(e) ? CommitOutcome::kFull : CommitOutcome::kUnknown;
    r.error = e.what();
  }
  // SQLite may already have rolled back by itself; a failing ROLLBACK then does no harm.
  try {
    db_.Rollback();
  } catch (const StoreError&) {
  }
  return r;
}

void Transaction::Rollback() {
  if (db_.InTransaction()) db_.Rollback();
  open_ = false;
}

void Transaction::Abandon() {
  if (!open_) return;
  try {
    db_.Rollback();
  } catch (const StoreError&) {
  }
  // Open still when even ROLLBACK failed: reads must not pass for committed ones.
  open_ = db_.InTransaction();
}

bool Transaction::ProbeWritable(std::string* error) {
  try {
    db_.Exec("BEGIN IMMEDIATE");
    // The database header's user_version is not used by Conclave; changing it writes a page.
    int64_t v = 0;
    {
      auto st = db_.Prepare("PRAGMA user_version");
      if (st.Step()) v = st.Int(0);
    }
    db_.Exec("PRAGMA user_version = " + std::to_string((v + 1) % 1000000));
    db_.Exec("COMMIT");
    return true;
  } catch (const StoreError& e) {
    if (error) *error = e.what();
    try {
      db_.Exec("ROLLBACK");
    } catch (const StoreError&) {
    }
    return false;
  }
}

}  // namespace conclave::store
