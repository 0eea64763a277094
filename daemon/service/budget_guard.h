// BudgetGuard: the spending caps (DESIGN §1, issue 4 "Budgets") — per task, per session, per
// family per day. Refuses new work with RESOURCE_EXHAUSTED naming the cap, and says how much of
// its cap a task may still spend (a running dispatch is capped by it too). Loop thread only.
#pragma once

#include <string>
#include <vector>

#include "domain/task.h"
#include "service/core.h"

namespace conclave::service {

class BudgetGuard {
 public:
  explicit BudgetGuard(Core& core) : core_(core) {}

  // OK when another dispatch of t (on `family`, "" = not known yet) is within every cap.
  Status Check(const domain::Task& t, const std::string& family);
  // The task's cap (its own, else the config's per-task default; 0 = none).
  double TaskCap(const domain::Task& t) const;
  // What t may still spend, or 0 when it has no cap.
  double TaskRemaining(const domain::Task& t);

  struct Line {
    std::string cap;
    double spent = 0, cap_usd = 0;
  };
  // Spend against every configured cap (today's family caps, sessions), for GetStatus.
  std::vector<Line> Lines();
  // Midnight UTC of today (the family caps' window).
  int64_t DayStartMs() const;

 private:
  Core& core_;
};

}  // namespace conclave::service
