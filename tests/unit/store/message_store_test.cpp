// Unit tests: the message log — cursors, filters, unread (store/message_store). For every
// combination of filters Inbox, Check, Wait and Watch accept (recipient, sender, task ids,
// types, unread), both orders, cursors and limits, the indexed queries return exactly what the
// in-memory filter (MessageFilter::Matches) selects from the whole log; and the maintained
// counters equal a count of the rows.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "store/counters.h"
#include "store/dispatch_store.h"
#include "store/handle_store.h"
#include "store/task_store.h"
#include "store/terminal_store.h"
#include "store/transaction.h"
#include "store/message_store.h"
#include "store/migrations.h"
#include "store/retention_store.h"
#include "temp_db.h"

namespace conclave {
namespace {
using testing::Msg;
using testing::TempDb;

TEST_CASE("cursors: seq grows monotonically and After() resumes exactly", "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  std::vector<int64_t> seqs;
  for (int i = 0; i < 10; ++i) {
    auto m = Msg(i % 2 ? "a" : "b", i % 3 ? "status" : "question", i % 4);
    ms.Insert(m);
    seqs.push_back(m.seq);
  }
  for (size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i] > seqs[i - 1]);
  CHECK(ms.LastSeq() == seqs.back());
  domain::MessageFilter all;
  auto rest = ms.After(all, seqs[4], 100);
  REQUIRE(rest.size() == 5);
  CHECK(rest.front().seq == seqs[5]);
  // The SQL filter and the in-memory filter agree on every message and filter.
  std::vector<domain::MessageFilter> filters(4);
  filters[1].to = "a";
  filters[2].types = {"question"};
  filters[3].task_ids = {1, 3};
  auto everything = ms.After(all, 0, 100);
  for (const auto& f : filters) {
    auto sql = ms.After(f, 0, 100);
    size_t expected = 0;
    for (const auto& m : everything) expected += f.Matches(m) ? 1 : 0;
    CHECK(sql.size() == expected);
    for (const auto& m : sql) CHECK(f.Matches(m));
  }
  // The high-water mark survives deleting rows.
  t.db->Exec("DELETE FROM messages");
  CHECK(ms.LastSeq() == seqs.back());
}

TEST_CASE("the task index holds an entry for each message of a task and none for the rest",
          "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  for (int i = 0; i < 30; ++i) {
    auto m = Msg("h", "status", i % 10 == 0 ? 7 : 0);  // 3 of a task, 27 outside any
    ms.Insert(m);
  }
  // dbstat counts the cells of the index's own pages: its entries, not what a query returns.
  auto entries = [&](const char* index) {
    auto st = t.db->Prepare(std::string("SELECT COALESCE(SUM(ncell), 0) FROM dbstat ") +
                            "WHERE name = '" + index + "' AND pagetype = 'leaf'");
    st.Step();
    return st.Int(0);
  };
  CHECK(entries("messages_task") == 3);
  CHECK(entries("messages_to") == 30);  // the others hold every message
  domain::MessageFilter f;
  f.task_ids = {7};
  CHECK(ms.After(f, 0, 100).size() == 3);
}

TEST_CASE("TakeUnread marks read unless peeking", "[store]") {
  TempDb t;
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::MessageStore ms(*t.db);
  auto a = Msg("h", "status");
  auto b = Msg("h", "question");
  ms.Insert(a);
  ms.Insert(b);
  CHECK(ms.TakeUnread("h", {}, 10, true).size() == 2);
  CHECK(ms.TakeUnread("h", {"question"}, 10, false).size() == 1);
  CHECK(ms.TakeUnread("h", {}, 10, false).size() == 1);
  CHECK(ms.TakeUnread("h", {}, 10, false).empty());
}

}  // namespace
}  // namespace conclave

using namespace conclave;
using conclave::testing::TempDb;

namespace {

const std::vector<std::string> kTypes = {"status", "worker_done", "heartbeat", "reply"};

std::vector<domain::MessageRecord> Fill(store::MessageStore& ms, int n) {
  std::mt19937 rng(42);
  std::vector<domain::MessageRecord> all;
  for (int i = 0; i < n; ++i) {
    domain::MessageRecord m;
    m.created_ms = i;
    m.type = kTypes[rng() % kTypes.size()];
    // s9 sends and h9 receives one message in 40: a pair with one quiet side, so a filter
    // on both is driven by the sender (s9 with h2) as well as by the recipient (h9 with s1).
    m.from = i % 40 == 0 ? "s9" : "s" + std::to_string(rng() % 3);
    m.to = i % 40 == 20 ? "h9" : "h" + std::to_string(rng() % 4);
    m.subject = "m" + std::to_string(i);
    m.thread_id = "t";
    m.task_id = rng() % 5;  // 0 = none
    m.read = rng() % 3 == 0;
    ms.Insert(m);
    all.push_back(m);
  }
  return all;
}

std::vector<int64_t> Expected(const std::vector<domain::MessageRecord>& all,
                              const domain::MessageFilter& f, int64_t after, int limit,
                              bool newest) {
  std::vector<int64_t> out;
  for (const auto& m : all) {
    if (m.seq > after && f.Matches(m)) out.push_back(m.seq);
  }
  if (newest) std::reverse(out.begin(), out.end());
  if (out.size() > static_cast<size_t>(limit)) out.resize(limit);
  return out;
}

std::vector<int64_t> Seqs(const std::vector<domain::MessageRecord>& ms) {
  std::vector<int64_t> out;
  for (const auto& m : ms) out.push_back(m.seq);
  return out;
}

int64_t CountRows(store::Database& db, const std::string& where) {
  auto st = db.Prepare("SELECT COUNT(*) FROM " + where);
  st.Step();
  return st.Int(0);
}

}  // namespace

TEST_CASE("every filter combination reads exactly what the in-memory filter selects",
          "[store]") {
  TempDb t(true);
  store::MessageStore ms(*t.db);
  auto all = Fill(ms, 600);
  const std::vector<std::vector<std::string>> type_sets = {{}, {"status"}, {"reply", "status"}};
  // Past kMaxTaskArms task ids the query takes another shape: cover both.
  std::vector<int64_t> many_tasks;
  for (int64_t i = 2; i < 42; i += 2) many_tasks.push_back(i);  // (0 is no task: refused)
  const std::vector<std::vector<int64_t>> task_sets = {{}, {3}, {1, 4, 4, 2}, many_tasks};
  int checked = 0, quiet_sender_found = 0;
  for (const auto& types : type_sets) {
    for (const std::string to : {"", "h2", "h9"}) {
      for (const std::string from : {"", "s1", "s9"}) {
        for (const auto& tasks : task_sets) {
          for (bool unread : {false, true}) {
            domain::MessageFilter f;
            f.types = types;
            f.to = to;
            f.from = from;
            f.task_ids = tasks;
            f.unread_only = unread;
            for (int64_t after : {int64_t{0}, int64_t{300}}) {
              for (int limit : {1, 7, 1000}) {
                INFO("types=" << types.size() << " to=" << to << " from=" << from
                              << " tasks=" << tasks.size() << " unread=" << unread
                              << " after=" << after << " limit=" << limit);
                auto expected = Expected(all, f, after, limit, false);
                CHECK(Seqs(ms.After(f, after, limit)) == expected);
                if (to == "h2" && from == "s9" && !expected.empty()) ++quiet_sender_found;
                if (after == 0) {
                  CHECK(Seqs(ms.Newest(f, limit)) == Expected(all, f, 0, limit, true));
                }
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  CHECK(checked == 3 * 3 * 3 * 4 * 2 * 2 * 3);
  CHECK(quiet_sender_found > 0);  // the sender-driven query found something to compare
}

TEST_CASE("TakeUnread takes the oldest unread of one recipient, by type, and marks them read",
          "[store]") {
  TempDb t(true);
  store::MessageStore ms(*t.db);
  auto all = Fill(ms, 300);
  domain::MessageFilter f;
  f.to = "h1";
  f.unread_only = true;
  f.types = {"heartbeat", "reply"};
  auto want = Expected(all, f, 0, 5, false);
  CHECK(Seqs(ms.TakeUnread("h1", f.types, 5, true)) == want);  // peek
  CHECK(Seqs(ms.TakeUnread("h1", f.types, 5, false)) == want);
  for (auto& m : all) {
    if (std::find(want.begin(), want.end(), m.seq) != want.end()) m.read = true;
  }
  CHECK(Seqs(ms.TakeUnread("h1", f.types, 5, true)) == Expected(all, f, 0, 5, false));
}

TEST_CASE("maintained counters equal a count of the rows through inserts and updates",
          "[store]") {
  TempDb t(true);
  store::MessageStore ms(*t.db);
  store::HandleStore hs(*t.db);
  store::TerminalStore ts(*t.db);
  store::TaskStore tasks(*t.db);
  store::DispatchStore ds(*t.db);
  Fill(ms, 200);
  ms.TakeUnread("h0", {}, 10, false);
  ms.TakeUnread("h3", {"status"}, 1000, false);
  CHECK(ms.Count() == CountRows(*t.db, "messages"));
  CHECK(ms.CountUnread() == CountRows(*t.db, "messages WHERE read = 0"));
  CHECK(ms.CountUnread() > 0);

  for (int i = 0; i < 5; ++i) hs.Insert({"n" + std::to_string(i), "handle", 1, i == 4});
  hs.MarkClosed("n1");
  CHECK(hs.Count() == CountRows(*t.db, "handles WHERE closed = 0"));
  CHECK(hs.Count() == 3);

  for (int i = 0; i < 4; ++i) {
    ts.Insert({"w" + std::to_string(i), "p", "/tmp", domain::TerminalState::kIdle, 0, 1});
  }
  auto w1 = *ts.Get("w1");
  w1.state = domain::TerminalState::kClosed;
  ts.Save(w1);
  auto w2 = *ts.Get("w2");
  w2.state = domain::TerminalState::kBusy;
  w2.active_dispatch = 7;
  ts.Save(w2);
  CHECK(ts.CountOpen() == CountRows(*t.db, "terminals WHERE state != 'closed'"));
  CHECK(ts.CountOpen() == 3);

  std::vector<int64_t> ids;
  for (int i = 0; i < 6; ++i) {
    store::TaskRecord r;
    r.title = "t";
    r.status = domain::TaskState::kPending;
    ids.push_back(tasks.Insert(r));
  }
  for (int i = 0; i < 4; ++i) {
    auto r = *tasks.Get(ids[i]);
    r.status = i < 2 ? domain::TaskState::kCompleted : domain::TaskState::kFailed;
    tasks.Update(r);
  }
  auto r = *tasks.Get(ids[0]);
  tasks.Update(r);  // same status: no change
  std::map<std::string, int64_t> want{{"completed", 2}, {"failed", 2}, {"pending", 2}};
  CHECK(tasks.CountByStatus() == want);

  for (int i = 0; i < 3; ++i) {
    store::DispatchRecord d;
    d.task_id = ids[i];
    d.target = "w0";
    d.coordinator = "c";
    d.id = ds.Insert(d);
    if (i) {
      d.state = domain::DispatchState::kRunning;
      ds.Update(d);
    }
  }
  CHECK(ds.CountInState(domain::DispatchState::kQueued) == 1);
  CHECK(ds.CountInState(domain::DispatchState::kRunning) == 2);
  CHECK(ds.CountInState(domain::DispatchState::kFailed) == 0);
}

TEST_CASE("the message counts equal a count of the rows through inserts, reads, deletes and "
          "undone writes",
          "[store]") {
  // The counts come from the highest seq given less the rows gone, and the rows read
  // (migration 0014): every way a row comes, goes or changes its read state must keep them.
  TempDb t(true);
  store::MessageStore ms(*t.db);
  store::RetentionStore retention(*t.db);
  auto insert = [&](const std::string& to, bool read) {
    auto m = Msg(to, "status");
    m.read = read;
    ms.Insert(m);
  };
  auto check = [&](const std::string& step) {
    INFO(step);
    CHECK(ms.Count() == CountRows(*t.db, "messages"));
    CHECK(ms.CountUnread() == CountRows(*t.db, "messages WHERE read = 0"));
  };
  check("empty: no sequence yet");
  Fill(ms, 300);  // a third inserted already read
  check("inserts");
  REQUIRE(CountRows(*t.db, "messages WHERE read != 0") > 0);
  ms.TakeUnread("h1", {}, 20, false);
  check("marked read");
  t.db->Exec("UPDATE messages SET read = 0 WHERE seq % 7 = 0");
  check("marked unread again, by SQL around the store");

  // Undone: a savepoint rolled back, then a whole transaction.
  t.db->Begin();
  t.db->Savepoint();
  insert("h1", false);
  insert("h1", true);
  t.db->Exec("DELETE FROM messages WHERE seq = 3");
  t.db->RollbackTo();
  t.db->Release();
  insert("h2", false);
  t.db->Commit();
  check("a savepoint undone inside a committed transaction");
  t.db->Begin();
  insert("h2", false);
  ms.TakeUnread("h2", {}, 100, false);
  t.db->Exec("DELETE FROM messages WHERE seq < 50");
  t.db->Rollback();
  check("a transaction rolled back");

  // Retention deletes read messages and heartbeats, the newest row included.
  ms.TakeUnread("h2", {}, 100, false);  // the newest row (h2's) is read
  check("h2's read");
  const int64_t last = ms.LastSeq();
  auto gone = retention.DeleteMessages(last, last, 0, 1000);
  REQUIRE(gone.count > 0);
  REQUIRE(gone.last_seq == last);  // the highest seq's row is gone; the sequence stays
  check("retention");
  t.db->Exec("DELETE FROM messages");
  check("every row deleted");
  CHECK(ms.Count() == 0);
  insert("h3", false);
  check("an insert after that");
  CHECK(ms.Count() == 1);
}

TEST_CASE("no trigger runs for an unread insert, and the read trigger counts a read one",
          "[store]") {
  // SQLite opens a trigger's frame before it tests its WHEN, on every row: a Send's insert
  // pays that unless no trigger is on it (migration 0015).
  TempDb t(true);
  store::MessageStore ms(*t.db);
  std::vector<std::string> triggers;
  sqlite3* raw = t.db->handle();
  sqlite3_trace_v2(
      raw, SQLITE_TRACE_STMT,
      [](unsigned, void* ctx, void*, void* x) -> int {
        std::string text(static_cast<const char*>(x));
        if (text.rfind("-- TRIGGER ", 0) == 0) {
          static_cast<std::vector<std::string>*>(ctx)->push_back(text.substr(11));
        }
        return 0;
      },
      &triggers);
  auto unread = Msg("h1", "status");
  ms.Insert(unread);
  CHECK(triggers.empty());
  auto read = Msg("h1", "status");
  read.read = true;
  ms.Insert(read);
  CHECK(triggers == std::vector<std::string>{"messages_count_read"});
  sqlite3_trace_v2(raw, 0, nullptr, nullptr);
  CHECK(ms.Get(read.seq)->read);
  CHECK(!ms.Get(unread.seq)->read);
  CHECK(ms.Count() == 2);
  CHECK(ms.CountUnread() == 1);
}

TEST_CASE("a read insert whose update fails leaves nothing, and throws the first error",
          "[store]") {
  TempDb t(true);
  store::MessageStore ms(*t.db);
  auto kept = Msg("h1", "status");
  ms.Insert(kept);
  // The update fails with a full disk; the rollback to the insert's savepoint with
  // rollback_to_rc; and, with sqlite_rolls_back, SQLite has rolled the whole transaction back
  // by itself first (as it may on a full disk or an I/O error).
  auto check = [&](const std::string& step, int rollback_to_rc, bool sqlite_rolls_back) {
    INFO(step);
    auto m = Msg("h1", "status");
    m.read = true;
    sqlite3* raw = t.db->handle();
    t.db->SetFaultHookForTest([=](std::string_view sql) {
      if (sql.rfind("UPDATE messages SET read = 1", 0) == 0) {
        if (sqlite_rolls_back) sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
        return SQLITE_FULL;
      }
      if (sql.rfind("ROLLBACK TO ", 0) == 0) return rollback_to_rc;
      return SQLITE_OK;
    });
    try {
      ms.Insert(m);
      FAIL("the insert went through");
    } catch (const store::StoreError& e) {
      CHECK(store::IsDiskFull(e));  // the update's error, not the rollback's
    }
    t.db->SetFaultHookForTest(nullptr);
    CHECK(m.read);
    CHECK(m.seq == 0);
  };
  // On its own: the savepoint was the transaction, and it is gone with the row.
  check("alone", SQLITE_OK, false);
  CHECK(!t.db->InTransaction());
  CHECK(ms.Count() == 1);
  CHECK(ms.CountUnread() == 1);
  CHECK(ms.LastSeq() == kept.seq);
  // Inside a transaction: rolled back to the savepoint, the transaction goes on.
  t.db->Begin();
  check("in a transaction", SQLITE_OK, false);
  REQUIRE(t.db->InTransaction());
  auto next = Msg("h1", "status");
  ms.Insert(next);
  t.db->Commit();
  CHECK(ms.Count() == 2);
  CHECK(ms.CountUnread() == 2);
  CHECK(next.seq == kept.seq + 1);
  // The whole transaction rolled back under the update: nothing left to undo.
  t.db->Begin();
  check("the transaction rolled back by SQLite", SQLITE_OK, true);
  CHECK(!t.db->InTransaction());
  CHECK(ms.Count() == 2);
  // In a request's savepoint inside a batch (as the batcher runs a later request), with the
  // rollback to the insert's own savepoint failing too: the request's rollback to its
  // savepoint takes all it wrote, and the batch's earlier request still commits.
  t.db->Begin();
  auto batched = Msg("h2", "status");
  ms.Insert(batched);
  t.db->Savepoint();
  auto earlier = Msg("h2", "status");
  ms.Insert(earlier);
  check("in a request's savepoint, the rollback to the insert's failing too", SQLITE_IOERR,
        false);
  t.db->RollbackTo();
  t.db->Release();
  t.db->Commit();
  CHECK(ms.Count() == 3);
  CHECK(ms.CountUnread() == 3);
  CHECK(ms.Get(batched.seq).has_value());
  CHECK(!ms.Get(earlier.seq).has_value());
}

TEST_CASE("upgrading to 0014 carries the message counts over, rows deleted before it included",
          "[store]") {
  TempDb t;
  auto ms = store::EmbeddedMigrations();
  REQUIRE(ms.size() >= 14);
  std::vector<store::Migration> before(ms.begin(), ms.begin() + 13);  // up to 0013
  REQUIRE(store::ApplyMigrations(*t.db, before).ok());
  for (int i = 0; i < 6; ++i) {
    t.db->Exec(std::string("INSERT INTO messages(created_ms, type, priority, sender, recipient, "
                           "subject, body, thread_id, read) VALUES (1,'status','normal','a','b',"
                           "'s','', 't', ") + (i % 3 == 0 ? "1" : "0") + ");");
  }
  // The newest row and a read one in the middle are gone: seqs 1..6 given, 4 rows left.
  t.db->Exec("DELETE FROM messages WHERE seq IN (4, 6)");
  REQUIRE(store::ApplyMigrations(*t.db, ms).ok());
  store::MessageStore m(*t.db);
  CHECK(m.Count() == 4);
  CHECK(m.CountUnread() == 3);
  auto more = testing::Msg("b", "status");
  m.Insert(more);
  CHECK(more.seq == 7);
  CHECK(m.Count() == 5);
  CHECK(m.CountUnread() == 4);
}

TEST_CASE("counters start from the rows already there when the migration runs", "[store]") {
  TempDb t;
  auto ms = store::EmbeddedMigrations();
  std::vector<store::Migration> before(ms.begin(), ms.begin() + 3);  // up to 0003
  REQUIRE(store::ApplyMigrations(*t.db, before).ok());
  t.db->Exec(
      "INSERT INTO messages(created_ms, type, priority, sender, recipient, subject, body, "
      "thread_id, read) VALUES (1,'status','normal','a','b','s','', 't', 0), "
      "(1,'status','normal','a','b','s','', 't', 1);"
      "INSERT INTO tasks(title, brief, status, role, created_ms, updated_ms, coordinator) "
      "VALUES ('t','b','ready','writer',1,1,'c');");
  REQUIRE(store::ApplyMigrations(*t.db, ms).ok());
  store::MessageStore m(*t.db);
  store::TaskStore tasks(*t.db);
  CHECK(m.Count() == 2);
  CHECK(m.CountUnread() == 1);
  CHECK(tasks.CountByStatus() == std::map<std::string, int64_t>{{"ready", 1}});
}

namespace conclave {
namespace {

// A log where h7 gets `busy` heartbeats on task 5 from s0..s9 (s1 sends a tenth of them),
// then two messages from "rare" to h7, two escalations from s1 and task 5's two worker_done
// messages, all in one transaction.
void FillSkewed(store::Database& db, store::MessageStore& ms, int busy) {
  db.Begin();
  for (int i = 0; i < busy; ++i) {
    domain::MessageRecord m = testing::Msg("h7", "heartbeat", 5);
    m.from = "s" + std::to_string(i % 10);
    m.read = true;
    ms.Insert(m);
  }
  for (int i = 0; i < 2; ++i) {
    domain::MessageRecord rare = testing::Msg("h7", "status");
    rare.from = "rare";
    ms.Insert(rare);
    domain::MessageRecord escalation = testing::Msg("h1", "escalation");
    escalation.from = "s1";
    ms.Insert(escalation);
    domain::MessageRecord done = testing::Msg("coordinator", "worker_done", 5);
    done.from = "conclaved";
    ms.Insert(done);
  }
  db.Commit();
}

// Page fetches one read makes, and what it returned.
struct Cost {
  int64_t pages;
  size_t rows;
};
Cost Measure(store::Database& db, const std::function<std::vector<domain::MessageRecord>()>& read) {
  int64_t before = db.PageFetches();
  size_t rows = read().size();
  return {db.PageFetches() - before, rows};
}

}  // namespace

TEST_CASE("a filter whose rare half is the sender or a type reads no more in a 100x bigger log",
          "[store][perf]") {
  // Before: to= + from= walked every entry of the recipient and checked the sender on its row;
  // from= + type (or unread) walked every message of the sender, and task= + type every
  // message of the task (a worker flooding its task made each Wait for its worker_done walk
  // the flood). All of them grew with the log.
  struct Read {
    domain::MessageFilter filter;
    size_t rows;  // what it returns in both logs
  };
  std::vector<Read> reads(5);
  reads[0].filter.to = "h7";
  reads[0].filter.from = "rare";
  reads[1].filter.from = "s1";
  reads[1].filter.types = {"escalation"};
  reads[2].filter.from = "s1";
  reads[2].filter.unread_only = true;
  reads[3].filter.task_ids = {5};
  reads[3].filter.types = {"worker_done"};
  reads[4].filter.task_ids = {5};  // the task alone: its first or newest 50, not a sort of all
  for (int i = 0; i < 4; ++i) reads[i].rows = 2;
  reads[4].rows = 50;
  std::vector<Cost> small, big;
  for (int busy : {200, 20000}) {
    TempDb t(true);
    store::MessageStore ms(*t.db);
    FillSkewed(*t.db, ms, busy);
    auto& out = busy == 200 ? small : big;
    for (const auto& r : reads) {
      out.push_back(Measure(*t.db, [&] { return ms.Newest(r.filter, 50); }));
      out.push_back(Measure(*t.db, [&] { return ms.After(r.filter, 0, 50); }));
      out.push_back(Measure(*t.db, [&] { return ms.After(r.filter, busy / 2, 50); }));  // a cursor
    }
  }
  REQUIRE(small.size() == 3 * reads.size());
  REQUIRE(big.size() == small.size());
  for (size_t i = 0; i < small.size(); ++i) {
    INFO("read " << i << ": " << small[i].pages << " pages at 200 messages, " << big[i].pages
                 << " at 20,000");
    CHECK(small[i].rows == reads[i / 3].rows);
    CHECK(big[i].rows == reads[i / 3].rows);
    // A walk of the busy side fetches a page per row it checks: thousands here.
    CHECK(big[i].pages <= 2 * small[i].pages + 40);
  }
}

TEST_CASE("a filter on a recipient and a sender is driven by the side with fewer entries",
          "[store][perf]") {
  TempDb t(true);
  store::MessageStore ms(*t.db);
  FillSkewed(*t.db, ms, 2000);
  // The other way round: a busy sender (s1, 200 messages to h7) to a recipient with none.
  domain::MessageFilter f;
  f.to = "nobody";
  f.from = "s1";
  Cost idle = Measure(*t.db, [&] { return ms.Newest(f, 50); });
  CHECK(idle.rows == 0);
  f.to = "h7";
  f.from = "rare";
  Cost rare = Measure(*t.db, [&] { return ms.Newest(f, 50); });
  CHECK(rare.rows == 2);
  // Each is two probes and the query, 16 seeks of ~3 pages each (~150 pages); a walk of the
  // busy side fetches at least a page for each of its 200 or 2,000 entries' rows.
  CHECK(idle.pages < 400);
  CHECK(rare.pages < 400);
}

}  // namespace conclave
