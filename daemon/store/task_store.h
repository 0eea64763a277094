// TaskStore: tasks and their dependency DAG. Dependants of a task are found through the
// task_deps(dep_id) index, so completing a task touches only its dependants.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domain/task.h"
#include "store/database.h"
#include "store/row_cache.h"

namespace conclave::store {

using TaskRecord = domain::Task;

class TaskStore {
 public:
  explicit TaskStore(Database& db) : db_(db), cache_(db) {}

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

 private:
  Database& db_;
  RowCache<int64_t, TaskRecord> cache_;  // Get's rows, kept exact by the writes
};

}  // namespace conclave::store
