// StatusReads: the parts of GetStatus that come from the store (row counts, the schema
// version, active cooldowns, spend against the caps), read once per change of the store
// instead of on every call. Every row the daemon writes goes through the loop's one
// connection, so its total change count (SQLite's, rolled-back changes included) moves with
// every write that could change these figures; with the day (spend is per day) it keys the
// snapshot. Cooldowns are filtered by the clock at each read. A status on an idle daemon runs
// no SQL; after a write, one read transaction re-reads everything.
// Loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "service/budget_guard.h"
#include "service/core.h"
#include "store/cooldown_store.h"

namespace conclave::service {

class StatusReads {
 public:
  struct Snapshot {
    int schema_version = 0;
    std::map<std::string, int64_t> counts;  // handles, messages, unread, terminals, tasks_*, ...
    std::vector<store::CooldownRecord> cooldowns;  // active when read; filter by now
    std::vector<BudgetGuard::Line> spend;
  };

  StatusReads(Core& core, BudgetGuard& budgets) : core_(core), budgets_(budgets) {}

  // The snapshot, re-read first when the store changed (or the day turned) since the last.
  const Snapshot& Get();
  // How many times the store was read (diagnostics and tests).
  int64_t rereads() const { return rereads_; }

 private:
  void Reread();

  Core& core_;
  BudgetGuard& budgets_;
  Snapshot snap_;
  int64_t key_changes_ = -1, key_day_ = -1, rereads_ = 0;
};

}  // namespace conclave::service
