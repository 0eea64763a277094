// ReviewStore: reviews, their rounds, sign-offs on their decision gates, and the
// Strong-per-session guard. Loop thread only. Throws StoreError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/review_record.h"
#include "store/database.h"

namespace conclave::store {

using ReviewRecord = domain::Review;
using RoundRecordRow = domain::ReviewRound;

class ReviewStore {
 public:
  explicit ReviewStore(Database& db) : db_(db) {}

  std::optional<ReviewRecord> Get(int64_t id);
  std::optional<ReviewRecord> GetByKey(const std::string& key);
  int64_t Insert(const ReviewRecord& r);
  void Update(const ReviewRecord& r);
  std::vector<ReviewRecord> List(int limit, int64_t since_ms = 0);
  // The reviews still running, oldest first: a seek of reviews_running, which holds only them.
  std::vector<ReviewRecord> Running();

  int64_t InsertRound(const RoundRecordRow& r);
  void UpdateRound(const RoundRecordRow& r);
  std::vector<RoundRecordRow> Rounds(int64_t review_id);  // all revisions, in order
  std::optional<RoundRecordRow> RoundForTask(int64_t task_id);

  int64_t InsertSignoff(const domain::Signoff& s);
  std::vector<domain::Signoff> Signoffs(int64_t review_id);  // oldest first

  // Atomically claims the session's one Strong review; false when already used.
  bool ClaimStrongSession(const std::string& session, int64_t review_id, int64_t now_ms);

 private:
  Database& db_;
};

}  // namespace conclave::store
