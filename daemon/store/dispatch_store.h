// DispatchStore: one row per attempt of a task on a terminal.
// state: queued running succeeded failed timed_out cancelled interrupted
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/dispatch.h"
#include "store/database.h"
#include "store/row_cache.h"

namespace conclave::store {

using DispatchRecord = domain::Dispatch;

class DispatchStore {
 public:
  explicit DispatchStore(Database& db) : db_(db), cache_(db) {}

  std::optional<DispatchRecord> Get(int64_t id);
  int64_t Insert(const DispatchRecord& d);
  void Update(const DispatchRecord& d);
  std::vector<DispatchRecord> ForTask(int64_t task_id);
  std::vector<DispatchRecord> InState(domain::DispatchState state);
  std::optional<DispatchRecord> LatestForTerminal(const std::string& terminal);
  // Maintained counter, not a count of rows.
  int64_t CountInState(domain::DispatchState state);
  int CountRunningForProfile(const std::string& profile);

 private:
  Database& db_;
  RowCache<int64_t, DispatchRecord> cache_;  // Get's rows, kept exact by the writes
};

}  // namespace conclave::store
