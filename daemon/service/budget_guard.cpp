#include "service/budget_guard.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "domain/cost.h"

namespace conclave::service {

int64_t BudgetGuard::DayStartMs() const {
  int64_t now = core_.clock.NowMs();
  return now - now % (24 * 3600 * 1000LL);
}

double BudgetGuard::TaskCap(const domain::Task& t) const {
  return t.budget_usd > 0 ? t.budget_usd : core_.config.budgets.per_task_usd;
}

double BudgetGuard::TaskRemaining(const domain::Task& t) {
  double cap = TaskCap(t);
  if (cap <= 0) return 0;
  return std::max(0.0001, cap - core_.spend.Task(t.id));
}

Status BudgetGuard::Check(const domain::Task& t, const std::string& family) {
  const auto& b = core_.config.budgets;
  std::vector<std::tuple<std::string, double, double>> caps;
  // A cap that is not set checks nothing (CheckCaps skips it): its spend is not summed.
  if (double cap = TaskCap(t); cap > 0) {
    caps.emplace_back("per-task cap of task " + std::to_string(t.id), cap, core_.spend.Task(t.id));
  }
  if (!t.session.empty() && b.per_session_usd > 0) {
    caps.emplace_back("per-session cap of session " + t.session, b.per_session_usd,
                      core_.spend.Session(t.session));
  }
  if (!family.empty()) {
    auto it = b.per_family_daily_usd.find(family);
    if (it != b.per_family_daily_usd.end()) {
      caps.emplace_back("daily cap of family " + family, it->second,
                        core_.spend.FamilyOnDay(family, DayStartMs()));
    }
  }
  domain::BudgetCheck check = domain::CheckCaps(caps, 0);
  if (check.ok) return Status::Ok();
  char buf[160];
  std::snprintf(buf, sizeof buf, ": spent $%.4f of $%.4f", check.spent, check.cap);
  return ResourceExhausted("budget: the " + check.cap_name + " is used up" + buf +
                           " (raise it with `conclave task update --budget-usd` or the config)");
}

std::vector<BudgetGuard::Line> BudgetGuard::Lines() {
  const auto& caps = core_.config.budgets.per_family_daily_usd;
  std::vector<Line> out;
  auto by_family = core_.spend.FamiliesOnDay(DayStartMs());
  for (const auto& [f, cap] : caps) by_family.emplace(f, 0);
  for (const auto& [f, spent] : by_family) {
    auto it = caps.find(f);
    out.push_back({"family:" + f + ":today", spent, it == caps.end() ? 0 : it->second});
  }
  for (const auto& [session, spent] : core_.spend.OpenSessions()) {
    out.push_back({"session:" + session, spent, core_.config.budgets.per_session_usd});
  }
  return out;
}

}  // namespace conclave::service
