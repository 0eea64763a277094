#include "store/dispatch_store.h"

#include <algorithm>

#include "store/counters.h"
#include "store/state_columns.h"

namespace conclave::store {
namespace {

constexpr const char* kSelect =
    "SELECT id, task_id, target, terminal, profile, family, state, attempt, op_retries, "
    "coordinator, token, pid, proc_start, created_ms, not_before_ms, started_ms, finished_ms, "
    "deadline_ms, last_output_ms, timeout_s, budget_usd, exit_code, failure_kind, failure_class, "
    "fingerprint, evidence, cost_usd, cost_estimated, result, worker_done, review_round, "
    "start_head FROM dispatches";

DispatchRecord ReadRow(const Statement& st) {
  DispatchRecord d;
  d.id = st.Int(0);
  d.task_id = st.Int(1);
  d.target = st.Text(2);
  d.terminal = st.Text(3);
  d.profile = st.Text(4);
  d.family = st.Text(5);
  d.state = DispatchStateColumn(st.Text(6));
  d.attempt = static_cast<int>(st.Int(7));
  d.op_retries = static_cast<int>(st.Int(8));
  d.coordinator = st.Text(9);
  d.token = st.Text(10);
  d.pid = static_cast<int>(st.Int(11));
  d.proc_start = st.Int(12);
  d.created_ms = st.Int(13);
  d.not_before_ms = st.Int(14);
  d.started_ms = st.Int(15);
  d.finished_ms = st.Int(16);
  d.deadline_ms = st.Int(17);
  d.last_output_ms = st.Int(18);
  d.timeout_s = static_cast<int>(st.Int(19));
  d.budget_usd = st.Real(20);
  d.exit_code = static_cast<int>(st.Int(21));
  d.failure_kind = st.Text(22);
  d.failure_class = st.Text(23);
  d.fingerprint = st.Text(24);
  d.evidence = st.Text(25);
  d.cost_usd = st.Real(26);
  d.cost_estimated = st.Int(27) != 0;
  d.result = st.Text(28);
  d.worker_done = st.Int(29) != 0;
  d.review_round = st.Int(30);
  d.start_head = st.Text(31);
  return d;
}

void BindAll(Statement& st, const DispatchRecord& d) {
  st.Bind(1, d.task_id).BindKept(2, d.target).BindKept(3, d.terminal).BindKept(4, d.profile);
  st.BindKept(5, d.family).Bind(6, Text(d.state)).Bind(7, d.attempt).Bind(8, d.op_retries);
  st.BindKept(9, d.coordinator).BindKept(10, d.token).Bind(11, d.pid).Bind(12, d.proc_start);
  st.Bind(13, d.created_ms).Bind(14, d.not_before_ms).Bind(15, d.started_ms);
  st.Bind(16, d.finished_ms).Bind(17, d.deadline_ms).Bind(18, d.last_output_ms);
  st.Bind(19, d.timeout_s).Bind(20, d.budget_usd).Bind(21, d.exit_code);
  st.BindKept(22, d.failure_kind).BindKept(23, d.failure_class).BindKept(24, d.fingerprint);
  st.BindKept(25, d.evidence).Bind(26, d.cost_usd).Bind(27, d.cost_estimated ? 1 : 0);
  st.BindKept(28, d.result).Bind(29, d.worker_done ? 1 : 0).Bind(30, d.review_round);
  st.BindKept(31, d.start_head);
}

size_t TextBytes(const DispatchRecord& d) {
  return d.result.size() + d.evidence.size() + d.fingerprint.size() + d.target.size() +
         d.start_head.size() + d.token.size();
}

constexpr const char* kColumns =
    "task_id, target, terminal, profile, family, state, attempt, op_retries, coordinator, "
    "token, pid, proc_start, created_ms, not_before_ms, started_ms, finished_ms, deadline_ms, "
    "last_output_ms, timeout_s, budget_usd, exit_code, failure_kind, failure_class, "
    "fingerprint, evidence, cost_usd, cost_estimated, result, worker_done, review_round, "
    "start_head";

}  // namespace

std::optional<DispatchRecord> DispatchStore::Get(int64_t id) {
  if (const DispatchRecord* cached = cache_.Find(id)) return *cached;
  static const std::string kSql = std::string(kSelect) + " WHERE id = ?";
  auto st = db_.Prepare(kSql);
  st.Bind(1, id);
  if (!st.Step()) return std::nullopt;
  DispatchRecord d = ReadRow(st);
  cache_.Put(id, d, TextBytes(d));
  return d;
}

int64_t DispatchStore::Insert(const DispatchRecord& d) {
  static const std::string kSql = [] {
    std::string q = "?";
    for (int i = 1; i < 31; ++i) q += ",?";
    return std::string("INSERT INTO dispatches(") + kColumns + ") VALUES (" + q + ")";
  }();
  auto st = db_.Prepare(kSql);
  BindAll(st, d);
  st.Run();
  // Every column but the id was bound from d: the new row is d with its id.
  DispatchRecord row = d;
  row.id = db_.LastInsertId();
  row.budget_usd = AsStored(row.budget_usd);
  row.cost_usd = AsStored(row.cost_usd);
  cache_.Put(row.id, row, TextBytes(row));
  return row.id;
}

void DispatchStore::Update(const DispatchRecord& d) {
  // task_id and created_ms never change after the insert, and SQLite rewrites the entry of
  // every index over a column the SET names: leaving them out spares two of the four indexes
  // (and their pages in the commit) on every update. Parameters keep BindAll's numbers.
  // family and cost_usd are named only when they change (or the row is not cached): naming
  // them runs the spend trigger of migration 0011, a sub-program per update.
  auto build = [](std::initializer_list<std::string_view> left_out) {
    std::string cols = kColumns;
    std::string sets;
    size_t start = 0;
    for (int number = 1; start < cols.size(); ++number) {
      size_t comma = cols.find(',', start);
      std::string name = cols.substr(start, comma == std::string::npos ? std::string::npos
                                                                       : comma - start);
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      if (std::find(left_out.begin(), left_out.end(), name) == left_out.end()) {
        sets += (sets.empty() ? "" : ", ") + name + " = ?" + std::to_string(number);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return "UPDATE dispatches SET " + sets + " WHERE id = ?32";
  };
  static const std::string kSql = build({"task_id", "created_ms"});
  static const std::string kSpendUnchangedSql =
      build({"task_id", "created_ms", "family", "cost_usd"});
  const DispatchRecord* before = cache_.Find(d.id);
  const bool spend_unchanged = before && before->family == d.family &&
                               before->cost_usd == AsStored(d.cost_usd);
  auto st = db_.Prepare(spend_unchanged ? kSpendUnchangedSql : kSql);
  BindAll(st, d);
  st.Bind(32, d.id);
  st.Run();
  if (DispatchRecord* cached = cache_.Find(d.id)) {
    DispatchRecord row = d;  // all but the two columns the UPDATE leaves alone
    row.task_id = cached->task_id;
    row.created_ms = cached->created_ms;
    row.budget_usd = AsStored(row.budget_usd);
    row.cost_usd = AsStored(row.cost_usd);
    cache_.Put(d.id, row, TextBytes(row));
  }
}

std::vector<DispatchRecord> DispatchStore::ForTask(int64_t task_id) {
  static const std::string kSql = std::string(kSelect) + " WHERE task_id = ? ORDER BY id";
  auto st = db_.Prepare(kSql);
  st.Bind(1, task_id);
  std::vector<DispatchRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

std::vector<DispatchRecord> DispatchStore::InState(domain::DispatchState state) {
  static const std::string kSql = std::string(kSelect) + " WHERE state = ? ORDER BY id";
  auto st = db_.Prepare(kSql);
  st.Bind(1, Text(state));
  std::vector<DispatchRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

std::optional<DispatchRecord> DispatchStore::LatestForTerminal(const std::string& terminal) {
  static const std::string kSql =
      std::string(kSelect) + " WHERE terminal = ? ORDER BY id DESC LIMIT 1";
  auto st = db_.Prepare(kSql);
  st.Bind(1, terminal);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

int64_t DispatchStore::CountInState(domain::DispatchState state) {
  return ReadCounter(db_, "dispatches_" + Text(state));
}

int DispatchStore::CountRunningForProfile(const std::string& profile) {
  auto st = db_.Prepare("SELECT COUNT(*) FROM dispatches WHERE state = 'running' AND profile = ?");
  st.Bind(1, profile);
  st.Step();
  return static_cast<int>(st.Int(0));
}

}  // namespace conclave::store
