#include "store/gate_store.h"

namespace conclave::store {
namespace {
constexpr const char* kSelect =
    "SELECT id, task_id, review_id, question, options, status, decision, created_ms, "
    "resolved_ms, flow_id FROM gates";
GateRecord ReadRow(const Statement& st) {
  return GateRecord{st.Int(0),  st.Int(1),  st.Int(2), st.Text(3), st.Text(4),
                    st.Text(5), st.Text(6), st.Int(7), st.Int(8), st.Int(9)};
}
}  // namespace

std::optional<GateRecord> GateStore::Get(int64_t id) {
  auto st = db_.Prepare(std::string(kSelect) + " WHERE id = ?");
  st.Bind(1, id);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

int64_t GateStore::Insert(const GateRecord& g) {
  db_.Prepare(
         "INSERT INTO gates(task_id, review_id, question, options, status, decision, created_ms, "
         "resolved_ms, flow_id) VALUES (?,?,?,?,?,?,?,?,?)")
      .Bind(1, g.task_id)
      .Bind(2, g.review_id)
      .Bind(3, g.question)
      .Bind(4, g.options)
      .Bind(5, g.status)
      .Bind(6, g.decision)
      .Bind(7, g.created_ms)
      .Bind(8, g.resolved_ms)
      .Bind(9, g.flow_id)
      .Run();
  return db_.LastInsertId();
}

void GateStore::Resolve(int64_t id, const std::string& decision, int64_t when_ms) {
  db_.Prepare("UPDATE gates SET status = 'resolved', decision = ?, resolved_ms = ? WHERE id = ?")
      .Bind(1, decision)
      .Bind(2, when_ms)
      .Bind(3, id)
      .Run();
}

std::vector<GateRecord> GateStore::List(bool open_only, int64_t task_id) {
  std::string sql = std::string(kSelect) + " WHERE 1=1";
  if (open_only) sql += " AND status = 'open'";
  if (task_id) sql += " AND task_id = ?";
  sql += " ORDER BY id";
  auto st = db_.Prepare(sql);
  if (task_id) st.Bind(1, task_id);
  std::vector<GateRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

int64_t GateStore::CountOpenForTask(int64_t task_id) {
  auto st = db_.Prepare("SELECT COUNT(*) FROM gates WHERE status = 'open' AND task_id = ?");
  st.Bind(1, task_id);
  st.Step();
  return st.Int(0);
}

}  // namespace conclave::store
