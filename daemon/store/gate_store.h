// GateStore: decision gates — coordinator-owned questions that block a task (or a review)
// until resolved.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/gate.h"
#include "store/database.h"

namespace conclave::store {

using GateRecord = domain::Gate;

class GateStore {
 public:
  explicit GateStore(Database& db) : db_(db) {}
  std::optional<GateRecord> Get(int64_t id);
  int64_t Insert(const GateRecord& g);
  void Resolve(int64_t id, const std::string& decision, int64_t when_ms);
  std::vector<GateRecord> List(bool open_only, int64_t task_id);
  int64_t CountOpenForTask(int64_t task_id);

 private:
  Database& db_;
};

}  // namespace conclave::store
