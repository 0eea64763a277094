#include "store/spend_store.h"

namespace conclave::store {

double SpendStore::Task(int64_t task_id) {
  auto st = db_.Prepare("SELECT COALESCE(SUM(cost_usd), 0) FROM dispatches WHERE task_id = ?");
  st.Bind(1, task_id);
  st.Step();
  return st.Real(0);
}

double SpendStore::Session(const std::string& session) {
  auto st = db_.Prepare(
      "SELECT COALESCE(SUM(d.cost_usd), 0) FROM dispatches d JOIN tasks t ON t.id = d.task_id "
      "WHERE t.session = ?");
  st.Bind(1, session);
  st.Step();
  return st.Real(0);
}

double SpendStore::FamilySince(const std::string& family, int64_t since_ms) {
  auto st = db_.Prepare(
      "SELECT COALESCE(SUM(cost_usd), 0) FROM dispatches WHERE family = ? AND created_ms >= ?");
  st.Bind(1, family).Bind(2, since_ms);
  st.Step();
  return st.Real(0);
}

std::map<std::string, double> SpendStore::FamiliesSince(int64_t since_ms) {
  // Only the window's rows; left alone, the planner walks all of the dispatches to save the
  // GROUP BY a sort.
  auto st = db_.Prepare(
      "SELECT family, COALESCE(SUM(cost_usd), 0) FROM dispatches INDEXED BY dispatches_created "
      "WHERE created_ms >= ? AND family != '' GROUP BY family ORDER BY family");
  st.Bind(1, since_ms);
  std::map<std::string, double> out;
  while (st.Step()) out[st.Text(0)] = st.Real(1);
  return out;
}

std::map<std::string, double> SpendStore::Sessions() {
  // session > '' walks the session index instead of every task.
  auto st = db_.Prepare(
      "SELECT t.session, COALESCE(SUM(d.cost_usd), 0) FROM tasks t LEFT JOIN dispatches d ON "
      "d.task_id = t.id WHERE t.session > '' GROUP BY t.session ORDER BY t.session");
  std::map<std::string, double> out;
  while (st.Step()) out[st.Text(0)] = st.Real(1);
  return out;
}

}  // namespace conclave::store
