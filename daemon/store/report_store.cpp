#include "store/report_store.h"

namespace conclave::store {

std::vector<ProfileReliability> ReportStore::DispatchReliability(int64_t since_ms) {
  auto st = db_.Prepare(
      "SELECT profile, family, COUNT(*), SUM(state = 'succeeded'), "
      "SUM(state = 'timed_out' OR failure_kind IN ('timeout', 'heartbeat_lost')), "
      "SUM(state IN ('failed', 'timed_out')), SUM(failure_kind = 'contract_violation'), "
      "COALESCE(SUM(cost_usd), 0) FROM dispatches WHERE profile != '' AND finished_ms > 0 AND "
      "created_ms >= ? GROUP BY profile, family ORDER BY profile");
  st.Bind(1, since_ms);
  std::vector<ProfileReliability> out;
  while (st.Step()) {
    out.push_back({st.Text(0), st.Text(1), st.Int(2), st.Int(3), st.Int(4), st.Int(5), st.Int(6),
                   st.Real(7)});
  }
  return out;
}

std::vector<ProfileReliability> ReportStore::ReviewerDispatchReliability(int64_t since_ms) {
  auto st = db_.Prepare(
      "SELECT d.profile, d.family, COUNT(*), SUM(d.state = 'succeeded'), "
      "SUM(d.state = 'timed_out' OR d.failure_kind IN ('timeout', 'heartbeat_lost')), "
      "SUM(d.state IN ('failed', 'timed_out')), SUM(d.failure_kind = 'contract_violation'), "
      "COALESCE(SUM(d.cost_usd), 0) FROM dispatches d JOIN tasks t ON t.id = d.task_id "
      "WHERE t.role = 'reviewer' AND d.profile != '' AND d.finished_ms > 0 AND "
      "d.created_ms >= ? GROUP BY d.profile, d.family ORDER BY d.profile");
  st.Bind(1, since_ms);
  std::vector<ProfileReliability> out;
  while (st.Step()) {
    out.push_back({st.Text(0), st.Text(1), st.Int(2), st.Int(3), st.Int(4), st.Int(5), st.Int(6),
                   st.Real(7)});
  }
  return out;
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
