#include "store/spend_store.h"

namespace conclave::store {

double SpendStore::Task(int64_t task_id) {
  auto st = db_.Prepare("SELECT COALESCE(SUM(cost_usd), 0) FROM dispatches WHERE task_id = ?");
  st.Bind(1, task_id);
  st.Step();
  return st.Real(0);
}

namespace {
constexpr int64_t kDayMs = 86400000;
double Usd(int64_t micros) { return static_cast<double>(micros) / 1e6; }
}  // namespace

double SpendStore::Session(const std::string& session) {
  auto st = db_.Prepare("SELECT micros FROM spend_session WHERE session = ?");
  st.Bind(1, session);
  return st.Step() ? Usd(st.Int(0)) : 0;
}

double SpendStore::FamilyOnDay(const std::string& family, int64_t day_start_ms) {
  auto st = db_.Prepare("SELECT micros FROM spend_family_day WHERE day = ? AND family = ?");
  st.Bind(1, day_start_ms / kDayMs).Bind(2, family);
  return st.Step() ? Usd(st.Int(0)) : 0;
}

std::map<std::string, double> SpendStore::FamiliesOnDay(int64_t day_start_ms) {
  auto st = db_.Prepare("SELECT family, micros FROM spend_family_day WHERE day = ?");
  st.Bind(1, day_start_ms / kDayMs);
  std::map<std::string, double> out;
  while (st.Step()) out[st.Text(0)] = Usd(st.Int(1));
  return out;
}

std::map<std::string, double> SpendStore::OpenSessions() {
  // Open tasks that name a session first, from the partial index that holds only those (0012;
  // CROSS JOIN keeps that order, INDEXED BY the index whatever statistics an ANALYZE left): no
  // task row is read, and tasks without a session are not visited. Then each session's total
  // by its key: the work in flight is read, not every session the store has seen. A session
  // named by several open tasks comes once per task; the map keeps one. One run per open
  // status, bound: `status IN (four literals)` built a temporary b-tree of the four at every
  // run, ~20k of the ~32k instructions the read took when no open task names a session.
  static const std::string kOpen[] = {"pending", "ready", "dispatched", "blocked"};
  auto st = db_.Prepare(
      "SELECT t.session, s.micros FROM tasks t INDEXED BY tasks_open_session "
      "CROSS JOIN spend_session s ON s.session = t.session "
      "WHERE t.status = ?1 AND t.session != ''");
  std::map<std::string, double> out;
  for (const auto& status : kOpen) {
    st.Reset();
    st.Bind(1, status);
    while (st.Step()) out[st.Text(0)] = Usd(st.Int(1));
  }
  return out;
}

}  // namespace conclave::store
