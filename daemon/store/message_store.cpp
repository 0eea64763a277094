#include "store/message_store.h"

#include <algorithm>
#include <string>

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
  // Reads by recipient or type enumerate the closed list of types: a row outside it would
  // be invisible to them.
  if (!domain::IsMessageType(m.type)) {
    throw StoreError(SQLITE_CONSTRAINT, "message type '" + m.type + "' is not a known type");
  }
  if (m.read) return InsertRead(m);
  db_.Prepare(
         "INSERT INTO messages(created_ms, type, priority, sender, recipient, subject, body, "
         "payload, task_id, dispatch_id, thread_id, reply_to, read) "
         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,0)")
      .Bind(1, m.created_ms)
      .BindKept(2, m.type)
      .BindKept(3, m.priority)
      .BindKept(4, m.from)
      .BindKept(5, m.to)
      .BindKept(6, m.subject)
      .BindKept(7, m.body)
      .BindKept(8, m.payload)
      .Bind(9, m.task_id)
      .Bind(10, m.dispatch_id)
      .Bind(11, m.thread_id)
      .Bind(12, m.reply_to)
      .Run();
  m.seq = db_.LastInsertId();
}

// A row goes in unread and is then marked read, so the trigger on that update counts it
// (migration 0015: no trigger runs for an insert). Both in a savepoint of its own name, so that
// a failure here never rolls back or releases a caller's savepoint ("op", the batcher's).
void MessageStore::InsertRead(domain::MessageRecord& m) {
  const int64_t seq_before = m.seq;
  const bool began = !db_.InTransaction();
  db_.Prepare("SAVEPOINT message_read").Run();
  try {
    m.read = false;
    Insert(m);
    m.read = true;
    db_.Prepare("UPDATE messages SET read = 1 WHERE seq = ?").Bind(1, m.seq).Run();
    db_.Prepare("RELEASE message_read").Run();
  } catch (...) {
    m.read = true;
    m.seq = seq_before;
    // The error reported is the first one. What the savepoint holds is undone: with the
    // transaction it began, or back to it inside the caller's, unless SQLite already rolled
    // the whole transaction back by itself (a full disk, an I/O error). Should the undoing
    // fail too, the savepoint stays inside the caller's transaction or savepoint, which the
    // caller's own failure path rolls back whole (a named one cancels those nested in it).
    try {
      if (began) {
        if (db_.InTransaction()) db_.Rollback();
      } else if (db_.InTransaction()) {
        db_.Exec("ROLLBACK TO message_read");
        db_.Exec("RELEASE message_read");
      }
    } catch (const StoreError&) {
    }
    throw;
  }
}

std::optional<domain::MessageRecord> MessageStore::Get(int64_t seq) {
  static const std::string kSql = std::string("SELECT ") + kMessageColumns + " FROM messages WHERE seq = ?";
  auto st = db_.Prepare(kSql);
  st.Bind(1, seq);
  if (!st.Step()) return std::nullopt;
  return ReadRow(st);
}

namespace {

void BindFilter(Statement& st, const MessageQuery& q, const domain::MessageFilter& f) {
  if (q.bind_to) st.Bind(3, f.to);
  if (q.bind_from) st.Bind(4, f.from);
  if (q.bind_types_json) st.Bind(5, JsonStringArray(f.types));
  if (q.bind_tasks_json) st.Bind(6, JsonNumberArray(f.task_ids));
  for (const auto& b : q.binds) {
    if (b.is_text) {
      st.Bind(b.index, b.text);
    } else {
      st.Bind(b.index, b.number);
    }
  }
}

}  // namespace

int64_t MessageStore::SideEntries(const domain::MessageFilter& f, bool sender, int64_t after_seq,
                                  int64_t at_most) {
  MessageQuery q = PlanSideProbe(f, sender, domain::MessageTypes());
  auto st = db_.Prepare(q.sql);
  st.Bind(1, after_seq).Bind(2, at_most);
  BindFilter(st, q, f);
  int64_t n = 0;
  while (st.Step()) ++n;
  return n;
}

std::vector<domain::MessageRecord> MessageStore::Query(const domain::MessageFilter& f,
                                                       int64_t after_seq, int limit,
                                                       bool newest_first) {
  std::vector<domain::MessageRecord> out;
  if (limit <= 0) return out;
  // A recipient and a sender: the query walks the entries of one of them and checks the other
  // on each, so it is driven by the one with fewer entries after the cursor, counted up to
  // kSideProbe in a few seeks each (a side with none: nothing can match). When both have that
  // many, the recipient drives, and a pair with little between them is walked.
  bool by_sender = false;
  if (f.task_ids.empty() && !f.to.empty() && !f.from.empty()) {
    const int64_t sent = SideEntries(f, true, after_seq, kSideProbe);
    if (sent == 0) return out;
    const int64_t received = SideEntries(f, false, after_seq, kSideProbe);
    if (received == 0) return out;
    by_sender = sent < received;
  }
  MessageQuery q = PlanMessageQuery(f, newest_first, domain::MessageTypes(), by_sender);
  auto st = db_.Prepare(q.sql);
  st.Bind(1, after_seq).Bind(2, static_cast<int64_t>(limit));
  BindFilter(st, q, f);
  while (st.Step()) out.push_back(ReadRow(st));
  // A query of several arms returns rows in its plan's order, the merge's (query_plan_test pins
  // that plan): checked in one pass, and sorted should another SQLite ever plan it otherwise.
  auto in_order = [newest_first](const domain::MessageRecord& a, const domain::MessageRecord& b) {
    return newest_first ? a.seq > b.seq : a.seq < b.seq;
  };
  if (!std::is_sorted(out.begin(), out.end(), in_order)) {
    std::sort(out.begin(), out.end(), in_order);
  }
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

MessageStore::Counts MessageStore::CountRows() {
  auto st = db_.Prepare(
      "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0) - "
      "COALESCE((SELECT n FROM counters WHERE name = 'messages_gone'), 0), "
      "COALESCE((SELECT n FROM counters WHERE name = 'messages_read'), 0)");
  st.Step();
  Counts c;
  c.rows = st.Int(0);
  c.unread = c.rows - st.Int(1);
  return c;
}

}  // namespace conclave::store
