#include "store/task_store.h"

#include "store/counters.h"
#include "store/state_columns.h"

namespace conclave::store {
namespace {

constexpr const char* kSelect =
    "SELECT id, title, brief, status, role, hypothesis, scope, validation, COALESCE(idem_key,''), "
    "blocked_reason, resume_status, result, created_ms, updated_ms, auto_retry, "
    "auto_retries_used, coordinator, session, budget_usd, unmet_deps, breaker_count, breaker_fp, "
    "last_target FROM tasks";

TaskRecord ReadRow(const Statement& st) {
  TaskRecord t;
  t.id = st.Int(0);
  t.title = st.Text(1);
  t.brief = st.Text(2);
  t.status = TaskStateColumn(st.Text(3));
  t.role = st.Text(4);
  t.hypothesis = st.Text(5);
  t.scope = st.Text(6);
  t.validation = st.Text(7);
  t.idem_key = st.Text(8);
  t.blocked_reason = st.Text(9);
  t.resume_status = OptionalTaskStateColumn(st.Text(10));
  t.result = st.Text(11);
  t.created_ms = st.Int(12);
  t.updated_ms = st.Int(13);
  t.auto_retry = static_cast<int>(st.Int(14));
  t.auto_retries_used = static_cast<int>(st.Int(15));
  t.coordinator = st.Text(16);
  t.session = st.Text(17);
  t.budget_usd = st.Real(18);
  t.unmet_deps = static_cast<int>(st.Int(19));
  t.breaker_count = static_cast<int>(st.Int(20));
  t.breaker_fp = st.Text(21);
  t.last_target = st.Text(22);
  return t;
}

size_t TextBytes(const TaskRecord& t) {
  return t.brief.size() + t.result.size() + t.hypothesis.size() + t.scope.size() +
         t.validation.size() + t.blocked_reason.size() + t.title.size();
}

}  // namespace

std::optional<TaskRecord> TaskStore::Get(int64_t id) {
  if (const TaskRecord* cached = cache_.Find(id)) return *cached;
  static const std::string kSql = std::string(kSelect) + " WHERE id = ?";
  auto st = db_.Prepare(kSql);
  st.Bind(1, id);
  if (!st.Step()) return std::nullopt;
  TaskRecord t = ReadRow(st);
  cache_.Put(id, t, TextBytes(t));
  return t;
}

std::optional<TaskRecord> TaskStore::GetByKey(const std::string& key) {
  static const std::string kSql = std::string(kSelect) + " WHERE idem_key = ?";
  auto st = db_.Prepare(kSql);
  st.Bind(1, key);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

int64_t TaskStore::Insert(const TaskRecord& t) {
  auto st = db_.Prepare(
      "INSERT INTO tasks(title, brief, status, role, hypothesis, scope, validation, idem_key, "
      "blocked_reason, resume_status, result, created_ms, updated_ms, auto_retry, "
      "auto_retries_used, coordinator, session, budget_usd, unmet_deps, breaker_count, "
      "breaker_fp, last_target) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.BindKept(1, t.title).BindKept(2, t.brief).Bind(3, Text(t.status)).BindKept(4, t.role);
  st.BindKept(5, t.hypothesis).BindKept(6, t.scope).BindKept(7, t.validation);
  if (t.idem_key.empty()) st.BindNull(8); else st.Bind(8, t.idem_key);
  st.BindKept(9, t.blocked_reason).Bind(10, Text(t.resume_status)).BindKept(11, t.result);
  st.Bind(12, t.created_ms).Bind(13, t.updated_ms).Bind(14, t.auto_retry);
  st.Bind(15, t.auto_retries_used).BindKept(16, t.coordinator).BindKept(17, t.session);
  st.Bind(18, t.budget_usd).Bind(19, t.unmet_deps).Bind(20, t.breaker_count);
  st.BindKept(21, t.breaker_fp).BindKept(22, t.last_target);
  st.Run();
  return db_.LastInsertId();
}

void TaskStore::Update(const TaskRecord& t) {
  auto st = db_.Prepare(
      "UPDATE tasks SET title=?, brief=?, status=?, role=?, hypothesis=?, scope=?, validation=?, "
      "blocked_reason=?, resume_status=?, result=?, updated_ms=?, auto_retry=?, "
      "auto_retries_used=?, budget_usd=?, unmet_deps=?, breaker_count=?, breaker_fp=?, "
      "last_target=? WHERE id=?");
  st.BindKept(1, t.title).BindKept(2, t.brief).Bind(3, Text(t.status)).BindKept(4, t.role);
  st.BindKept(5, t.hypothesis).BindKept(6, t.scope).BindKept(7, t.validation);
  st.BindKept(8, t.blocked_reason).Bind(9, Text(t.resume_status)).BindKept(10, t.result);
  st.Bind(11, t.updated_ms).Bind(12, t.auto_retry).Bind(13, t.auto_retries_used);
  st.Bind(14, t.budget_usd).Bind(15, t.unmet_deps).Bind(16, t.breaker_count);
  st.BindKept(17, t.breaker_fp).BindKept(18, t.last_target).Bind(19, t.id);
  st.Run();
  if (TaskRecord* cached = cache_.Find(t.id)) {
    // The columns the UPDATE leaves alone keep the values read.
    TaskRecord row = t;
    row.idem_key = cached->idem_key;
    row.created_ms = cached->created_ms;
    row.coordinator = cached->coordinator;
    row.session = cached->session;
    row.budget_usd = AsStored(row.budget_usd);
    cache_.Put(t.id, row, TextBytes(row));
  }
}

std::vector<TaskRecord> TaskStore::List(const std::string& status, int limit) {
  // Both walk an index in id order and stop at the limit.
  static const std::string kAll = std::string(kSelect) + " WHERE id > 0 ORDER BY id LIMIT ?2";
  static const std::string kByStatus =
      std::string(kSelect) + " WHERE status = ?1 ORDER BY id LIMIT ?2";
  auto st = db_.Prepare(status.empty() ? kAll : kByStatus);
  if (!status.empty()) st.Bind(1, status);
  st.Bind(2, static_cast<int64_t>(limit));
  std::vector<TaskRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

void TaskStore::AddDep(int64_t task_id, int64_t dep_id) {
  db_.Prepare("INSERT OR IGNORE INTO task_deps(task_id, dep_id) VALUES (?,?)")
      .Bind(1, task_id)
      .Bind(2, dep_id)
      .Run();
}

std::vector<int64_t> TaskStore::Deps(int64_t task_id) {
  auto st = db_.Prepare("SELECT dep_id FROM task_deps WHERE task_id = ? ORDER BY dep_id");
  st.Bind(1, task_id);
  std::vector<int64_t> out;
  while (st.Step()) out.push_back(st.Int(0));
  return out;
}

std::vector<int64_t> TaskStore::Dependants(int64_t dep_id) {
  auto st = db_.Prepare("SELECT task_id FROM task_deps WHERE dep_id = ? ORDER BY task_id");
  st.Bind(1, dep_id);
  std::vector<int64_t> out;
  while (st.Step()) out.push_back(st.Int(0));
  return out;
}

std::map<std::string, int64_t> TaskStore::CountByStatus() { return ReadCounters(db_, "tasks_"); }

}  // namespace conclave::store
