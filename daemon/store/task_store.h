// TaskStore: tasks and their dependency DAG. Dependants of a task are found through the
// task_deps(dep_id) index, so completing a task touches only its dependants.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/database.h"

namespace conclave::store {

struct TaskRecord {
  int64_t id = 0;
  std::string title;
  std::string brief;
  std::string status;  // pending ready dispatched completed failed blocked cancelled
  std::string role = "writer";
  std::string hypothesis, scope, validation;
  std::string idem_key;
  std::string blocked_reason;
  std::string resume_status;  // status to return to when a decision gate resolves
  std::string result;         // JSON
  int64_t created_ms = 0, updated_ms = 0;
  int auto_retry = 0, auto_retries_used = 0;
  std::string coordinator = "coordinator";
  std::string session;
  double budget_usd = 0;
  int unmet_deps = 0;
  int breaker_count = 0;
  std::string breaker_fp;
  std::string last_target;
};

class TaskStore {
 public:
  explicit TaskStore(Database& db) : db_(db) {}

  std::optional<TaskRecord> Get(int64_t id);
  std::optional<TaskRecord> GetByKey(const std::string& key);
  int64_t Insert(const TaskRecord& t);  // returns the id
  void Update(const TaskRecord& t);     // every mutable column
  std::vector<TaskRecord> List(const std::string& status, int limit);
  void AddDep(int64_t task_id, int64_t dep_id);
  std::vector<int64_t> Deps(int64_t task_id);
  std::vector<int64_t> Dependants(int64_t dep_id);
  // Non-zero task counts by status (maintained counters, not a count of rows).
  std::map<std::string, int64_t> CountByStatus();
  double SessionSpend(const std::string& session);
  // (session, spent) for every session with tasks, ascending by session.
  std::vector<std::pair<std::string, double>> SpendBySession();

 private:
  Database& db_;
};

}  // namespace conclave::store
