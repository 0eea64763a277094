// CooldownStore: per-profile cooldowns after a rate limit — until when a profile takes no new
// dispatch, and why. Loop thread only; writes inside the commit batcher's transaction.
// Throws StoreError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace conclave::store {

struct CooldownRecord {
  std::string profile;
  int64_t until_ms = 0;
  std::string reason;
};

class CooldownStore {
 public:
  explicit CooldownStore(Database& db) : db_(db) {}

  // Sets (or replaces) the profile's cooldown.
  void Put(const CooldownRecord& c);
  // The profile's cooldown when it is still in force at now_ms.
  std::optional<CooldownRecord> Active(const std::string& profile, int64_t now_ms);
  // Every cooldown in force at now_ms, by profile name.
  std::vector<CooldownRecord> AllActive(int64_t now_ms);

 private:
  Database& db_;
};

}  // namespace conclave::store
