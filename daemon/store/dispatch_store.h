// DispatchStore: one row per attempt of a task on a terminal.
// state: queued running succeeded failed timed_out cancelled interrupted
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/database.h"

namespace conclave::store {

struct DispatchRecord {
  int64_t id = 0;
  int64_t task_id = 0;
  std::string target;    // address asked for: a handle or a group
  std::string terminal;  // chosen terminal ("" while queued)
  std::string profile, family;
  std::string state = "queued";
  int attempt = 1;
  int op_retries = 0;
  std::string coordinator;
  std::string token;
  int pid = 0;
  int64_t proc_start = 0;  // /proc/<pid>/stat starttime, to never kill a recycled pid
  int64_t created_ms = 0, not_before_ms = 0, started_ms = 0, finished_ms = 0;
  int64_t deadline_ms = 0, last_output_ms = 0;
  int timeout_s = 0;
  double budget_usd = 0;
  int exit_code = -1;
  std::string failure_kind, failure_class, fingerprint, evidence;
  double cost_usd = 0;
  bool cost_estimated = false;
  std::string result;  // JSON
  bool worker_done = false;  // the worker reported itself with its token
  int64_t review_round = 0;
};

class DispatchStore {
 public:
  explicit DispatchStore(Database& db) : db_(db) {}

  std::optional<DispatchRecord> Get(int64_t id);
  int64_t Insert(const DispatchRecord& d);
  void Update(const DispatchRecord& d);
  std::vector<DispatchRecord> ForTask(int64_t task_id);
  std::vector<DispatchRecord> InState(const std::string& state);
  std::optional<DispatchRecord> LatestForTerminal(const std::string& terminal);
  // Maintained counter, not a count of rows.
  int64_t CountInState(const std::string& state);
  int CountRunningForProfile(const std::string& profile);
  double TaskSpend(int64_t task_id);
  double FamilySpendSince(const std::string& family, int64_t since_ms);
  // (family, spent) of dispatches created since since_ms, ascending by family.
  std::vector<std::pair<std::string, double>> SpendByFamilySince(int64_t since_ms);

 private:
  Database& db_;
};

}  // namespace conclave::store
