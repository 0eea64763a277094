#include "store/message_store.h"

#include <string>

namespace conclave::store {
namespace {

constexpr const char* kColumns =
    "seq, created_ms, type, priority, sender, recipient, subject, body, payload, task_id, "
    "dispatch_id, thread_id, reply_to, read";

domain::MessageRecord ReadRow(const Statement& st) {
  domain::MessageRecord m;
  m.seq = st.Int(0);
  m.created_ms = st.Int(1);
  m.type = st.Text(2);
  m.priority = st.Text(3);
  m.from = st.Text(4);
  m.to = st.Text(5);
  m.subject = st.Text(6);
  m.body = st.Text(7);
  m.payload = st.Text(8);
  m.task_id = st.Int(9);
  m.dispatch_id = st.Int(10);
  m.thread_id = st.Text(11);
  m.reply_to = st.Int(12);
  m.read = st.Int(13) != 0;
  return m;
}

// Appends "?,?,?" placeholders.
std::string Placeholders(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ",?" : "?";
  return s;
}

}  // namespace

void MessageStore::Insert(domain::MessageRecord& m) {
  db_.Prepare(
         "INSERT INTO messages(created_ms, type, priority, sender, recipient, subject, body, "
         "payload, task_id, dispatch_id, thread_id, reply_to, read) "
         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")
      .Bind(1, m.created_ms)
      .Bind(2, m.type)
      .Bind(3, m.priority)
      .Bind(4, m.from)
      .Bind(5, m.to)
      .Bind(6, m.subject)
      .Bind(7, m.body)
      .Bind(8, m.payload)
      .Bind(9, m.task_id)
      .Bind(10, m.dispatch_id)
      .Bind(11, m.thread_id)
      .Bind(12, m.reply_to)
      .Bind(13, m.read ? 1 : 0)
      .Run();
  m.seq = db_.LastInsertId();
}

std::optional<domain::MessageRecord> MessageStore::Get(int64_t seq) {
  auto st = db_.Prepare(std::string("SELECT ") + kColumns + " FROM messages WHERE seq = ?");
  st.Bind(1, seq);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

std::vector<domain::MessageRecord> MessageStore::Query(const domain::MessageFilter& f,
                                                       int64_t after_seq, int limit,
                                                       bool newest_first) {
  std::string sql = std::string("SELECT ") + kColumns + " FROM messages WHERE seq > ?";
  if (!f.types.empty()) sql += " AND type IN (" + Placeholders(f.types.size()) + ")";
  if (!f.to.empty()) sql += " AND recipient = ?";
  if (!f.from.empty()) sql += " AND sender = ?";
  if (!f.task_ids.empty()) sql += " AND task_id IN (" + Placeholders(f.task_ids.size()) + ")";
  if (f.unread_only) sql += " AND read = 0";
  sql += newest_first ? " ORDER BY seq DESC" : " ORDER BY seq ASC";
  sql += " LIMIT ?";
  auto st = db_.Prepare(sql);
  int i = 1;
  st.Bind(i++, after_seq);
  for (const auto& t : f.types) st.Bind(i++, t);
  if (!f.to.empty()) st.Bind(i++, f.to);
  if (!f.from.empty()) st.Bind(i++, f.from);
  for (int64_t id : f.task_ids) st.Bind(i++, id);
  st.Bind(i++, static_cast<int64_t>(limit));
  std::vector<domain::MessageRecord> out;
  while (st.Step()) out.push_back(ReadRow(st));
  return out;
}

std::vector<domain::MessageRecord> MessageStore::After(const domain::MessageFilter& filter,
                                                       int64_t after_seq, int limit) {
  return Query(filter, after_seq, limit, false);
}

std::vector<domain::MessageRecord> MessageStore::Newest(const domain::MessageFilter& filter,
                                                        int limit) {
  return Query(filter, 0, limit, true);
}

std::vector<domain::MessageRecord> MessageStore::TakeUnread(const std::string& handle,
                                                            const std::vector<std::string>& types,
                                                            int limit, bool peek) {
  domain::MessageFilter f;
  f.to = handle;
  f.types = types;
  f.unread_only = true;
  auto out = Query(f, 0, limit, false);
  if (!peek) {
    for (auto& m : out) {
      Statement upd = db_.Prepare("UPDATE messages SET read = 1 WHERE seq = ?");
      upd.Bind(1, m.seq).Run();
      m.read = true;
    }
  }
  return out;
}

int64_t MessageStore::LastSeq() {
  // sqlite_sequence keeps the high-water mark even when rows are gone.
  auto st = db_.Prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name='messages'), 0)");
  st.Step();
  return st.Int(0);
}

int64_t MessageStore::Count() {
  auto st = db_.Prepare("SELECT COUNT(*) FROM messages");
  st.Step();
  return st.Int(0);
}

int64_t MessageStore::CountUnread() {
  auto st = db_.Prepare("SELECT COUNT(*) FROM messages WHERE read = 0");
  st.Step();
  return st.Int(0);
}

}  // namespace conclave::store
