// SpendStore: what has been spent, for budget caps and GetStatus — per task, per session, per
// family since a time. Sums over dispatches' recorded cost. Loop thread only. Throws StoreError.
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
  double FamilySince(const std::string& family, int64_t since_ms);
  // Every family's spend since since_ms (families with no dispatch are absent).
  std::map<std::string, double> FamiliesSince(int64_t since_ms);
  // Every non-empty session's spend.
  std::map<std::string, double> Sessions();

 private:
  Database& db_;
};

}  // namespace conclave::store
