// ReviewStore: reviews, their rounds, and the Strong-per-session guard.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace conclave::store {

struct ReviewRecord {
  int64_t id = 0;
  std::string mode, writer_family, artifact_kind, artifact, artifact_sha;
  int revision = 1;
  std::string status = "running";
  std::string verdict, termination, reason, blocked_by;
  int cap = 2;
  std::string session, coordinator, idem_key;
  std::string plan = "{}";
  double budget_usd = 0;
  int64_t gate_id = 0;
  std::string findings = "[]";
  int64_t created_ms = 0, updated_ms = 0;
};

struct RoundRecordRow {
  int64_t id = 0;
  int64_t review_id = 0;
  int revision = 1;
  int round = 0;
  std::string role, profile, family;
  int64_t task_id = 0;
  std::string state = "running";
  std::string findings = "[]";
  int malformed = 0;
  std::string error;
  double cost_usd = 0;
  int64_t created_ms = 0, finished_ms = 0;
};

class ReviewStore {
 public:
  explicit ReviewStore(Database& db) : db_(db) {}

  std::optional<ReviewRecord> Get(int64_t id);
  std::optional<ReviewRecord> GetByKey(const std::string& key);
  int64_t Insert(const ReviewRecord& r);
  void Update(const ReviewRecord& r);
  std::vector<ReviewRecord> List(int limit, int64_t since_ms = 0);

  int64_t InsertRound(const RoundRecordRow& r);
  void UpdateRound(const RoundRecordRow& r);
  std::vector<RoundRecordRow> Rounds(int64_t review_id);  // all revisions, in order
  std::optional<RoundRecordRow> RoundForTask(int64_t task_id);

  // Atomically claims the session's one Strong review; false when already used.
  bool ClaimStrongSession(const std::string& session, int64_t review_id, int64_t now_ms);

 private:
  Database& db_;
};

}  // namespace conclave::store
