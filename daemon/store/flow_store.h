// FlowStore: the flows table — one row per flow, its recorded step and what that step waits
// for (a task, a review). Called inside the commit batcher's writes or for reads on the loop.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/flow.h"
#include "store/database.h"

namespace conclave::store {

class FlowStore {
 public:
  explicit FlowStore(Database& db) : db_(db) {}
  std::optional<domain::Flow> Get(int64_t id);
  std::optional<domain::Flow> GetByKey(const std::string& key);
  std::optional<domain::Flow> ByTask(int64_t task_id);
  std::optional<domain::Flow> ByReview(int64_t review_id);
  int64_t Insert(const domain::Flow& f);  // returns the id
  void Update(const domain::Flow& f);     // every mutable column
  // Newest first; status "" = any.
  std::vector<domain::Flow> List(const std::string& status, int limit);
  std::vector<domain::Flow> Running();
  // Flows not cleaned yet whose status is one of `statuses`, last changed before before_ms:
  // per status, the oldest change first, at most `limit` (< 0: all). A seek of
  // flows_uncleaned, which holds only flows not cleaned yet.
  std::vector<domain::Flow> Uncleaned(const std::vector<std::string>& statuses, int64_t before_ms,
                                      int limit);
  // Whether any flow is running. Asked after every dispatch, and most daemons run no flow: a
  // "none" is remembered, without a statement, until this store writes a flow or anything
  // may have undone a write on the connection (Database::undo_count, as for the row caches).
  bool AnyRunning();

 private:
  std::optional<domain::Flow> One(const std::string& where, int64_t v);
  Database& db_;
  bool none_running_ = false;
  uint64_t none_seen_ = 0;  // undo_count when none_running_ was read
};

}  // namespace conclave::store
