// ReportStore: the Phase-0 measurement queries (seed 000) — per-profile reliability of every
// dispatch and malformed review rounds, since a time. Loop thread only. Throws StoreError.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "store/database.h"

namespace conclave::store {

struct ProfileReliability {
  std::string profile, family;
  int64_t invocations = 0, clean = 0, timed_out = 0, failed = 0, malformed = 0;
  double cost_usd = 0;
};

class ReportStore {
 public:
  explicit ReportStore(Database& db) : db_(db) {}

  // Finished dispatches per profile created since since_ms.
  std::vector<ProfileReliability> DispatchReliability(int64_t since_ms);
  // The same over the dispatches of reviewer tasks only.
  std::vector<ProfileReliability> ReviewerDispatchReliability(int64_t since_ms);
  // Malformed review rounds per profile created since since_ms.
  std::map<std::string, int64_t> MalformedRounds(int64_t since_ms);

 private:
  Database& db_;
};

}  // namespace conclave::store
