#include "store/message_store.h"

#include <algorithm>
#include <string>

#include "store/counters.h"
#include "store/message_query.h"

namespace conclave::store {
namespace {

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
  static const std::string kSql = std::string("SELECT ") + kMessageColumns + " FROM messages WHERE seq = ?";
  auto st = db_.Prepare(kSql);
  st.Bind(1, seq);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

std::vector<domain::MessageRecord> MessageStore::Query(const domain::MessageFilter& f,
                                                       int64_t after_seq, int limit,
                                                       bool newest_first) {
  MessageQuery q = PlanMessageQuery(f, newest_first);
  std::string types_json = q.bind_types_json ? JsonStringArray(f.types) : std::string();
  std::vector<domain::MessageRecord> out;
  auto run = [&](int64_t task_id, const std::string* type) {
    auto st = db_.Prepare(q.sql);
    st.Bind(1, after_seq).Bind(2, static_cast<int64_t>(limit));
    if (q.bind_to) st.Bind(3, f.to);
    if (q.bind_from) st.Bind(4, f.from);
    if (q.bind_task) st.Bind(5, task_id);
    if (q.bind_type) st.Bind(6, *type);
    if (q.bind_types_json) st.Bind(7, types_json);
    while (st.Step()) out.push_back(ReadRow(st));
  };
  switch (q.split) {
    case MessageQuery::Split::kNone:
      run(f.task_ids.empty() ? 0 : f.task_ids[0], f.types.empty() ? nullptr : &f.types[0]);
      return out;
    case MessageQuery::Split::kByTask: {
      std::vector<int64_t> ids = f.task_ids;
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      for (int64_t id : ids) run(id, f.types.empty() ? nullptr : &f.types[0]);
      break;
    }
    case MessageQuery::Split::kByType: {
      std::vector<std::string> types = f.types;
      std::sort(types.begin(), types.end());
      types.erase(std::unique(types.begin(), types.end()), types.end());
      for (const auto& t : types) run(0, &t);
      break;
    }
  }
  // Each run is in seq order and runs are disjoint (a row has one task and one type).
  auto by_seq = [newest_first](const domain::MessageRecord& a, const domain::MessageRecord& b) {
    return newest_first ? a.seq > b.seq : a.seq < b.seq;
  };
  std::sort(out.begin(), out.end(), by_seq);
  if (out.size() > static_cast<size_t>(std::max(limit, 0))) out.resize(std::max(limit, 0));
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
      db_.Prepare("UPDATE messages SET read = 1 WHERE seq = ?").Bind(1, m.seq).Run();
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

int64_t MessageStore::Count() { return ReadCounter(db_, "messages"); }

int64_t MessageStore::CountUnread() { return ReadCounter(db_, "messages_unread"); }

}  // namespace conclave::store
