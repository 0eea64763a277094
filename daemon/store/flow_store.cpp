#include "store/flow_store.h"

namespace conclave::store {
namespace {
constexpr const char* kCols =
    "idem_key, title, brief, repo, base, base_sha, head_sha, branch, worktree, writer, "
    "writer_family, verify, review_mode, reviewers, cap, max_fix_rounds, ship, status, step, "
    "round, fix_rounds, task_id, verify_index, review_id, review_round, fix_brief, coordinator, "
    "last_error, note, history, cleaned, created_ms, updated_ms, budget_usd";
constexpr int kNumCols = 34;

domain::Flow ReadRow(const Statement& st) {
  domain::Flow f;
  int c = 0;
  f.id = st.Int(c++);
  f.idem_key = st.Text(c++);
  f.title = st.Text(c++);
  f.brief = st.Text(c++);
  f.repo = st.Text(c++);
  f.base = st.Text(c++);
  f.base_sha = st.Text(c++);
  f.head_sha = st.Text(c++);
  f.branch = st.Text(c++);
  f.worktree = st.Text(c++);
  f.writer = st.Text(c++);
  f.writer_family = st.Text(c++);
  f.verify = st.Text(c++);
  f.review_mode = st.Text(c++);
  f.reviewers = st.Text(c++);
  f.cap = static_cast<int>(st.Int(c++));
  f.max_fix_rounds = static_cast<int>(st.Int(c++));
  f.ship = st.Text(c++);
  f.status = st.Text(c++);
  f.step = domain::ParseFlowStep(st.Text(c++)).value_or(domain::FlowStep::kFailed);
  f.round = static_cast<int>(st.Int(c++));
  f.fix_rounds = static_cast<int>(st.Int(c++));
  f.task_id = st.Int(c++);
  f.verify_index = static_cast<int>(st.Int(c++));
  f.review_id = st.Int(c++);
  f.review_round = static_cast<int>(st.Int(c++));
  f.fix_brief = st.Text(c++);
  f.coordinator = st.Text(c++);
  f.last_error = st.Text(c++);
  f.note = st.Text(c++);
  f.history = st.Text(c++);
  f.cleaned = st.Int(c++) != 0;
  f.created_ms = st.Int(c++);
  f.updated_ms = st.Int(c++);
  f.budget_usd = st.Real(c++);
  return f;
}

// Binds every column of kCols from 1; returns the next index.
int BindAll(Statement& st, const domain::Flow& f) {
  int i = 1;
  if (f.idem_key.empty()) {
    st.BindNull(i++);
  } else {
    st.Bind(i++, f.idem_key);
  }
  auto b = [&](const auto& v) { st.Bind(i++, v); };
  b(f.title); b(f.brief); b(f.repo); b(f.base); b(f.base_sha); b(f.head_sha); b(f.branch);
  b(f.worktree); b(f.writer); b(f.writer_family); b(f.verify); b(f.review_mode); b(f.reviewers);
  b(f.cap); b(f.max_fix_rounds); b(f.ship); b(f.status); b(domain::FlowStepName(f.step));
  b(f.round); b(f.fix_rounds); b(f.task_id); b(f.verify_index); b(f.review_id);
  b(f.review_round); b(f.fix_brief); b(f.coordinator); b(f.last_error); b(f.note); b(f.history);
  b(f.cleaned ? 1 : 0); b(f.created_ms); b(f.updated_ms); b(f.budget_usd);
  return i;
}

std::string Select() { return std::string("SELECT id, ") + kCols + " FROM flows"; }
}  // namespace

std::optional<domain::Flow> FlowStore::One(const std::string& where, int64_t v) {
  auto st = db_.Prepare(Select() + " WHERE " + where + " ORDER BY id DESC LIMIT 1");
  st.Bind(1, v);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

std::optional<domain::Flow> FlowStore::Get(int64_t id) { return One("id = ?", id); }

std::optional<domain::Flow> FlowStore::ByTask(int64_t task_id) {
  if (task_id == 0) return std::nullopt;
  return One("task_id = ?", task_id);
}

std::optional<domain::Flow> FlowStore::ByReview(int64_t review_id) {
  if (review_id == 0) return std::nullopt;
  return One("review_id = ?", review_id);
}

std::optional<domain::Flow> FlowStore::GetByKey(const std::string& key) {
  auto st = db_.Prepare(Select() + " WHERE idem_key = ?");
  st.Bind(1, key);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

int64_t FlowStore::Insert(const domain::Flow& f) {
  std::string q;
  for (int i = 0; i < kNumCols; ++i) q += i ? ",?" : "?";
  auto st = db_.Prepare(std::string("INSERT INTO flows(") + kCols + ") VALUES (" + q + ")");
  none_running_ = false;
  BindAll(st, f);
  st.Run();
  return db_.LastInsertId();
}

void FlowStore::Update(const domain::Flow& f) {
  std::string sets, cols = kCols;
  size_t pos = 0;
  while (pos < cols.size()) {
    size_t comma = cols.find(',', pos);
    std::string name = cols.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    sets += (sets.empty() ? "" : ", ") + name + " = ?";
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  none_running_ = false;
  auto st = db_.Prepare("UPDATE flows SET " + sets + " WHERE id = ?");
  int i = BindAll(st, f);
  st.Bind(i, f.id);
  st.Run();
}

std::vector<domain::Flow> FlowStore::List(const std::string& status, int limit) {
  std::string sql = Select() + (status.empty() ? "" : " WHERE status = ?") + " ORDER BY id DESC LIMIT ?";
  auto st = db_.Prepare(sql);
  int i = 1;
  if (!status.empty()) st.Bind(i++, status);
  st.Bind(i, limit);
  std::vector<domain::Flow> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

std::vector<domain::Flow> FlowStore::Running() {
  auto st = db_.Prepare(Select() + " WHERE status = 'running' ORDER BY id");
  std::vector<domain::Flow> out;
  while (st.Step()) out.push_back(ReadRow(st));
  none_running_ = out.empty();
  none_seen_ = db_.undo_count();
  return out;
}

std::vector<domain::Flow> FlowStore::Uncleaned(const std::vector<std::string>& statuses,
                                               int64_t before_ms, int limit) {
  auto st = db_.Prepare(Select() +
                        " INDEXED BY flows_uncleaned WHERE cleaned = 0 AND status = ?1 AND "
                        "updated_ms < ?2 ORDER BY updated_ms, id LIMIT ?3");
  std::vector<domain::Flow> out;
  for (const auto& status : statuses) {
    st.Reset();
    st.Bind(1, status).Bind(2, before_ms).Bind(3, static_cast<int64_t>(limit));
    while (st.Step()) out.push_back(ReadRow(st));
  }
  return out;
}

bool FlowStore::AnyRunning() {
  if (none_running_ && none_seen_ == db_.undo_count()) return false;
  auto st = db_.Prepare("SELECT 1 FROM flows WHERE status = 'running' LIMIT 1");
  none_running_ = !st.Step();
  none_seen_ = db_.undo_count();
  return !none_running_;
}

}  // namespace conclave::store
