// SpendStore: what has been spent, for budget caps and GetStatus — per task (summed over its
// dispatches), per session and per family and UTC day (kept by the triggers of migration 0011
// in whole micro-dollars: one row read, however much work the day or the session saw).
// Loop thread only. Throws StoreError.
#pragma once

#include <map>
#include <string>

#include "store/database.h"

namespace conclave::store {

class SpendStore {
 public:
  explicit SpendStore(Database& db) : db_(db) {}

  double Task(int64_t task_id);
  double Session(const std::string& session);
  // The family's spend on dispatches created on the UTC day that starts at day_start_ms.
  double FamilyOnDay(const std::string& family, int64_t day_start_ms);
  // Every family with a dispatch created that day, and its spend.
  std::map<std::string, double> FamiliesOnDay(int64_t day_start_ms);
  // The spend of every session with a task still open (pending, ready, dispatched or
  // blocked): what GetStatus lists. A finished session's total stays, and is listed again
  // when a task joins it.
  std::map<std::string, double> OpenSessions();

 private:
  Database& db_;
};

}  // namespace conclave::store
