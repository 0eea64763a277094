#include "store/terminal_store.h"

#include "store/counters.h"
#include "store/state_columns.h"

namespace conclave::store {
namespace {
constexpr const char* kSelect =
    "SELECT handle, profile, cwd, state, active_dispatch, created_ms, exclusive FROM terminals";
TerminalRecord ReadRow(const Statement& st) {
  return TerminalRecord{st.Text(0), st.Text(1), st.Text(2), TerminalStateColumn(st.Text(3)),
                        st.Int(4),  st.Int(5),  st.Int(6) != 0};
}
}  // namespace

std::optional<TerminalRecord> TerminalStore::Get(const std::string& handle) {
  if (const TerminalRecord* cached = cache_.Find(handle)) return *cached;
  static const std::string kSql = std::string(kSelect) + " WHERE handle = ?";
  auto st = db_.Prepare(kSql);
  st.Bind(1, handle);
  if (!st.Step()) return std::nullopt;
  TerminalRecord t = ReadRow(st);
  cache_.Put(handle, t, t.cwd.size());
  return t;
}

void TerminalStore::Insert(const TerminalRecord& t) {
  cache_.Erase(t.handle);
  db_.Prepare(
         "INSERT INTO terminals(handle, profile, cwd, state, active_dispatch, created_ms, "
         "exclusive) VALUES (?,?,?,?,?,?,?)")
      .BindKept(1, t.handle)
      .BindKept(2, t.profile)
      .BindKept(3, t.cwd)
      .Bind(4, Text(t.state))
      .Bind(5, t.active_dispatch)
      .Bind(6, t.created_ms)
      .Bind(7, t.exclusive ? 1 : 0)
      .Run();
}

void TerminalStore::Save(const TerminalRecord& t) {
  db_.Prepare("UPDATE terminals SET state = ?, active_dispatch = ? WHERE handle = ?")
      .Bind(1, Text(t.state))
      .Bind(2, t.active_dispatch)
      .BindKept(3, t.handle)
      .Run();
  if (TerminalRecord* cached = cache_.Find(t.handle)) {
    cached->state = t.state;
    cached->active_dispatch = t.active_dispatch;
  }
}

std::vector<TerminalRecord> TerminalStore::List(bool include_closed) {
  auto st = db_.Prepare(std::string(kSelect) +
                        (include_closed ? " ORDER BY created_ms, handle"
                                        : " WHERE state != 'closed' ORDER BY created_ms, handle"));
  std::vector<TerminalRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

std::vector<int64_t> TerminalStore::RunningInExclusiveDir(const std::string& cwd) {
  auto st = db_.Prepare(
      "SELECT active_dispatch FROM terminals WHERE cwd = ?1 AND state != 'closed' "
      "AND active_dispatch != 0 AND EXISTS (SELECT 1 FROM terminals WHERE cwd = ?1 "
      "AND exclusive > 0 AND state != 'closed')");
  st.Bind(1, cwd);
  std::vector<int64_t> out;
  while (st.Step()) out.push_back(st.Int(0));
  return out;
}

int64_t TerminalStore::CountOpen() { return ReadCounter(db_, "terminals_open"); }

}  // namespace conclave::store
