#include "service/status_reads.h"

#include "store/migrations.h"

namespace conclave::service {

const StatusReads::Snapshot& StatusReads::Get() {
  const int64_t changes = core_.db.TotalChanges();
  const int64_t day = budgets_.DayStartMs();
  if (changes != key_changes_ || day != key_day_) {
    // Read inside the batch's open transaction, the figures include writes that may still be
    // rolled back (a failed COMMIT does not move the change count): they serve this call only.
    const bool batch_open = core_.db.InTransaction();
    Reread();
    key_changes_ = batch_open ? -1 : changes;
    key_day_ = day;
  }
  return snap_;
}

void StatusReads::Reread() {
  // One read transaction for the dozen statements (one lock instead of one per statement);
  // inside the batch's open transaction the reads simply join it.
  const bool own = !core_.db.InTransaction();
  Snapshot s;
  try {
    if (own) core_.db.BeginRead();
    s.schema_version = store::CurrentSchemaVersion(core_.db);
    s.counts["handles"] = core_.handles.Count();
    auto messages = core_.messages.CountRows();
    s.counts["messages"] = messages.rows;
    s.counts["unread"] = messages.unread;
    s.counts["terminals"] = core_.terminals.CountOpen();
    for (const auto& [status, n] : core_.tasks.CountByStatus()) s.counts["tasks_" + status] = n;
    s.counts["dispatches_running"] = core_.dispatches.CountInState(domain::DispatchState::kRunning);
    s.counts["dispatches_queued"] = core_.dispatches.CountInState(domain::DispatchState::kQueued);
    s.cooldowns = core_.cooldowns.AllActive(core_.clock.NowMs());
    s.spend = budgets_.Lines();
    if (own) core_.db.Commit();
  } catch (...) {
    // Never leave the read transaction open: every later write would fail to begin.
    if (own && core_.db.InTransaction()) {
      try {
        core_.db.Rollback();
      } catch (const std::exception&) {
      }
    }
    throw;
  }
  snap_ = std::move(s);
  ++rereads_;
}

}  // namespace conclave::service
