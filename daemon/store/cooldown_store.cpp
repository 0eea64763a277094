#include "store/cooldown_store.h"

namespace conclave::store {

void CooldownStore::Put(const CooldownRecord& c) {
  db_.Prepare(
         "INSERT INTO cooldowns(profile, until_ms, reason) VALUES (?,?,?) "
         "ON CONFLICT(profile) DO UPDATE SET until_ms = excluded.until_ms, "
         "reason = excluded.reason")
      .Bind(1, c.profile)
      .Bind(2, c.until_ms)
      .Bind(3, c.reason)
      .Run();
}

std::optional<CooldownRecord> CooldownStore::Active(const std::string& profile, int64_t now_ms) {
  auto st = db_.Prepare("SELECT until_ms, reason FROM cooldowns WHERE profile = ? AND until_ms > ?");
  st.Bind(1, profile).Bind(2, now_ms);
  if (!st.Step()) return std::nullopt;
  return CooldownRecord{profile, st.Int(0), st.Text(1)};
}

std::vector<CooldownRecord> CooldownStore::AllActive(int64_t now_ms) {
  auto st = db_.Prepare(
      "SELECT profile, until_ms, reason FROM cooldowns WHERE until_ms > ? ORDER BY profile");
  st.Bind(1, now_ms);
  std::vector<CooldownRecord> out;
  while (st.Step()) out.push_back({st.Text(0), st.Int(1), st.Text(2)});
  return out;
}

}  // namespace conclave::store
