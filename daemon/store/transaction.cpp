#include "store/transaction.h"

namespace conclave::store {

bool IsDiskFull(const StoreError& e) { return (e.sqlite_code() & 0xff) == SQLITE_FULL; }

void Transaction::Begin() {
  db_.Exec("BEGIN IMMEDIATE");
  open_ = true;
}

void Transaction::OpenSavepoint() { db_.Exec("SAVEPOINT op"); }

void Transaction::ReleaseSavepoint() { db_.Exec("RELEASE op"); }

void Transaction::RollbackSavepoint() {
  db_.Exec("ROLLBACK TO op");
  db_.Exec("RELEASE op");
}

CommitResult Transaction::Commit() {
  CommitResult r;
  if (!open_) return r;
  open_ = false;
  try {
    db_.Exec("COMMIT");
    return r;
  } catch (const StoreError& e) {
    r.outcome = IsDiskFull(e) ? CommitOutcome::kFull : CommitOutcome::kUnknown;
    r.error = e.what();
  }
  // SQLite may already have rolled back by itself; a failing ROLLBACK then does no harm.
  try {
    db_.Exec("ROLLBACK");
  } catch (const StoreError&) {
  }
  return r;
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
