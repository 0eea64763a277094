#include "store/handle_store.h"

#include "store/counters.h"

namespace conclave::store {
namespace {
HandleRecord ReadRow(const Statement& st) {
  return HandleRecord{st.Text(0), st.Text(1), st.Int(2), st.Int(3) != 0};
}
}  // namespace

std::optional<HandleRecord> HandleStore::Get(const std::string& name) {
  if (const HandleRecord* cached = cache_.Find(name)) return *cached;
  auto st = db_.Prepare("SELECT name, kind, created_ms, closed FROM handles WHERE name = ?");
  st.Bind(1, name);
  if (!st.Step()) return std::nullopt;
  HandleRecord h = ReadRow(st);
  cache_.Put(name, h, h.kind.size());
  return h;
}

void HandleStore::Insert(const HandleRecord& h) {
  cache_.Erase(h.name);
  db_.Prepare("INSERT INTO handles(name, kind, created_ms, closed) VALUES (?,?,?,?)")
      .Bind(1, h.name)
      .Bind(2, h.kind)
      .Bind(3, h.created_ms)
      .Bind(4, h.closed ? 1 : 0)
      .Run();
}

void HandleStore::MarkClosed(const std::string& name) {
  db_.Prepare("UPDATE handles SET closed = 1 WHERE name = ?").Bind(1, name).Run();
  if (HandleRecord* cached = cache_.Find(name)) cached->closed = true;
}

std::vector<HandleRecord> HandleStore::List(bool include_closed) {
  auto st = db_.Prepare(include_closed
                            ? "SELECT name, kind, created_ms, closed FROM handles ORDER BY name"
                            : "SELECT name, kind, created_ms, closed FROM handles WHERE closed = 0 "
                              "ORDER BY name");
  std::vector<HandleRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

int64_t HandleStore::Count() { return ReadCounter(db_, "handles_open"); }

}  // namespace conclave::store
