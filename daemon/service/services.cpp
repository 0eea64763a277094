#include "service/services.h"

#include "common/clock.h"

namespace conclave::service {

std::map<std::string, int64_t> Services::Counts() {
  std::map<std::string, int64_t> c;
  c["handles"] = core.handles.Count();
  c["messages"] = core.messages.Count();
  c["unread"] = core.messages.CountUnread();
  c["terminals"] = core.terminals.CountOpen();
  for (const auto& [status, n] : core.tasks.CountByStatus()) c["tasks_" + status] = n;
  c["dispatches_running"] = core.dispatches.CountInState("running");
  c["dispatches_queued"] = core.dispatches.CountInState("queued");
  c["waiters"] = static_cast<int64_t>(core.bus.waiter_count());
  c["watchers"] = static_cast<int64_t>(core.bus.watcher_count());
  c["profiles"] = static_cast<int64_t>(core.profiles.profiles.size());
  c["commits"] = core.batcher.commits();
  c["wal_checkpoints"] = core.db.checkpoints();
  return c;
}

std::vector<Services::SpendLine> Services::SpendLines() {
  std::vector<SpendLine> out;
  int64_t now = NowMs();
  int64_t day_start = now - now % (24 * 3600 * 1000LL);
  std::map<std::string, double> by_family;
  for (const auto& [f, spent] : core.dispatches.SpendByFamilySince(day_start)) by_family[f] = spent;
  for (const auto& [f, cap] : core.config.budgets.per_family_daily_usd) by_family.emplace(f, 0);
  for (const auto& [f, spent] : by_family) {
    auto it = core.config.budgets.per_family_daily_usd.find(f);
    out.push_back({"family:" + f + ":today", spent,
                   it == core.config.budgets.per_family_daily_usd.end() ? 0 : it->second});
  }
  for (const auto& [session, spent] : core.tasks.SpendBySession()) {
    out.push_back({"session:" + session, spent, core.config.budgets.per_session_usd});
  }
  return out;
}

}  // namespace conclave::service
