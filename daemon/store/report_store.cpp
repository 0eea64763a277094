#include "store/report_store.h"

#include <string>

namespace conclave::store {

namespace {

// One reliability query over dispatches d (joined with `join`, filtered by `where`).
std::vector<ProfileReliability> Reliability(Database& db, const std::string& join,
                                            const std::string& where, int64_t since_ms) {
  auto st = db.Prepare(
      "SELECT d.profile, d.family, COUNT(*), SUM(d.state = 'succeeded'), "
      "SUM(d.state = 'timed_out' OR d.failure_kind IN ('timeout', 'heartbeat_lost')), "
      "SUM(d.state IN ('failed', 'timed_out')), SUM(d.failure_kind = 'contract_violation'), "
      "COALESCE(SUM(d.cost_usd), 0) FROM dispatches d " + join +
      " WHERE " + where + "d.profile != '' AND d.finished_ms > 0 AND d.created_ms >= ? "
      "GROUP BY d.profile, d.family ORDER BY d.profile");
  st.Bind(1, since_ms);
  std::vector<ProfileReliability> out;
  while (st.Step()) {
    out.push_back({st.Text(0), st.Text(1), st.Int(2), st.Int(3), st.Int(4), st.Int(5), st.Int(6),
                   st.Real(7)});
  }
  return out;
}

}  // namespace

std::vector<ProfileReliability> ReportStore::DispatchReliability(int64_t since_ms) {
  return Reliability(db_, "", "", since_ms);
}

std::vector<ProfileReliability> ReportStore::ReviewerDispatchReliability(int64_t since_ms) {
  return Reliability(db_, "JOIN tasks t ON t.id = d.task_id", "t.role = 'reviewer' AND ",
                     since_ms);
}

std::map<std::string, int64_t> ReportStore::MalformedRounds(int64_t since_ms) {
  auto st = db_.Prepare(
      "SELECT profile, COALESCE(SUM(malformed), 0) FROM review_rounds WHERE created_ms >= ? "
      "GROUP BY profile");
  st.Bind(1, since_ms);
  std::map<std::string, int64_t> out;
  while (st.Step()) out[st.Text(0)] = st.Int(1);
  return out;
}

}  // namespace conclave::store
