// Unit test: no query the store issues walks a whole table of messages, tasks or dispatches.
// It calls every repository method (every message-filter shape included), then runs EXPLAIN
// QUERY PLAN on every SQL text the statement cache compiled — so a new query is checked as
// soon as a method here runs it — and fails on any SCAN ("SCAN t", or "SCAN t USING [COVERING]
// INDEX i", which is a full walk of the index) except of the small tables listed below.
// An index SEARCH is fine, including a bounded walk "id > 0 ORDER BY id LIMIT n".
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "store/cooldown_store.h"
#include "store/counters.h"
#include "store/dispatch_store.h"
#include "store/flow_store.h"
#include "store/gate_store.h"
#include "store/handle_store.h"
#include "store/message_store.h"
#include "store/migrations.h"
#include "store/report_store.h"
#include "store/retention_store.h"
#include "store/review_store.h"
#include "store/spend_store.h"
#include "store/task_store.h"
#include "store/terminal_store.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::TempDb;

namespace {

// Tables that stay small (a row per handle, terminal, gate, review, session...), and
// table-valued functions over a bound value: scanning these is fine.
const std::set<std::string> kSmallTables = {
    "handles",        "terminals",       "gates",           "cooldowns",
    "reviews",        "review_rounds",   "strong_sessions", "schema_migrations",
    "sqlite_master",  "sqlite_schema",   "sqlite_sequence", "json_each",
    "CONSTANT",  // "SCAN CONSTANT ROW": a SELECT without FROM
    "merged_arms"};  // a message filter's merged index seeks, LIMIT rows (pinned below)

// The plan lines of sql that walk a whole table (or a whole index of one) not in kSmallTables.
std::vector<std::string> FullScans(store::Database& db, const std::string& sql) {
  std::vector<std::string> out;
  auto st = db.Prepare("EXPLAIN QUERY PLAN " + sql);
  while (st.Step()) {
    std::string detail = st.Text(3);
    if (detail.rfind("SCAN ", 0) != 0) continue;
    std::string table = detail.substr(5, detail.find(' ', 5) - 5);
    if (!kSmallTables.count(table)) out.push_back(detail);
  }
  return out;
}

// Runs every repository method at least once, every message filter shape included.
void ExerciseEveryQuery(store::Database& db) {
  store::MessageStore ms(db);
  store::HandleStore hs(db);
  store::TerminalStore ts(db);
  store::TaskStore tasks(db);
  store::DispatchStore ds(db);
  store::GateStore gs(db);
  store::ReviewStore rs(db);

  hs.Insert({"h", "handle", 1, false});
  hs.Get("h");
  hs.MarkClosed("h");
  hs.List(true);
  hs.List(false);
  hs.Count();

  ts.Insert({"w", "p", "/tmp", domain::TerminalState::kIdle, 0, 1});
  auto w = *ts.Get("w");
  w.state = domain::TerminalState::kBusy;
  ts.Save(w);
  ts.List(true);
  ts.RunningInExclusiveDir("/tmp");
  ts.List(false);
  ts.CountOpen();

  domain::MessageRecord m;
  m.type = "status";
  m.from = "a";
  m.to = "h";
  m.subject = "s";
  m.thread_id = "t";
  m.task_id = 1;
  ms.Insert(m);
  ms.Get(m.seq);
  ms.LastSeq();
  ms.Count();
  ms.CountUnread();
  ms.TakeUnread("h", {}, 10, true);
  ms.TakeUnread("h", {"status"}, 10, false);
  ms.TakeUnread("h", {"status", "reply"}, 10, false);
  // "h" gets more than "a" sends and "x" gets nothing: a filter on both a recipient and a
  // sender is driven by each side in turn (MessageStore picks the one with fewer entries).
  for (int i = 0; i < 2; ++i) {
    domain::MessageRecord other = m;
    other.from = "b";
    ms.Insert(other);
  }
  for (const auto& types : std::vector<std::vector<std::string>>{{}, {"status"}, {"a", "b"}}) {
    for (const std::string to : {"", "h", "x"}) {
      for (const std::string from : {"", "a"}) {
        std::vector<int64_t> many(40);
        for (int64_t i = 0; i < 40; ++i) many[i] = i + 1;  // task ids (0 is no task)
        for (const auto& ids : std::vector<std::vector<int64_t>>{{}, {1}, {1, 2}, many}) {
          for (bool unread : {false, true}) {
            domain::MessageFilter f{types, to, from, ids, unread};
            ms.After(f, 0, 10);
            ms.Newest(f, 10);
          }
        }
      }
    }
  }

  store::TaskRecord t;
  t.title = "t";
  t.status = domain::TaskState::kPending;
  t.idem_key = "k";
  t.session = "s";
  t.id = tasks.Insert(t);
  tasks.Get(t.id);
  tasks.GetByKey("k");
  t.status = domain::TaskState::kReady;
  tasks.Update(t);
  tasks.List("", 10);
  tasks.List("ready", 10);
  tasks.AddDep(t.id, t.id + 1);
  tasks.Deps(t.id);
  tasks.Dependants(t.id + 1);
  tasks.CountByStatus();

  store::DispatchRecord d;
  d.task_id = t.id;
  d.target = "w";
  d.terminal = "w";
  d.family = "f";
  d.coordinator = "c";
  d.id = ds.Insert(d);
  store::DispatchStore(db).Get(d.id);  // a fresh store: its row cache would answer instead
  d.state = domain::DispatchState::kRunning;
  ds.Update(d);
  ds.ForTask(t.id);
  ds.InState(domain::DispatchState::kRunning);
  ds.LatestForTerminal("w");
  ds.CountInState(domain::DispatchState::kRunning);
  ds.CountRunningForProfile("p");

  store::SpendStore spend(db);
  spend.Task(t.id);
  spend.Session("s");
  spend.FamilyOnDay("f", 0);
  spend.FamiliesOnDay(0);
  spend.OpenSessions();

  store::ReportStore report(db);
  report.DispatchReliability(0);
  report.ReviewerDispatchReliability(0);
  report.MalformedRounds(0);

  store::RetentionStore retention(db);
  retention.LastSeqBefore(1, 100);
  retention.DeleteMessages(5, 3, 1, 100);
  retention.DispatchesAfter(0, 10);

  store::CooldownStore cooldowns(db);
  cooldowns.Put({"p", 5, "rate limited"});
  cooldowns.Active("p", 1);
  cooldowns.AllActive(1);

  store::GateRecord g;
  g.task_id = t.id;
  g.question = "q";
  g.id = gs.Insert(g);
  gs.Get(g.id);
  gs.Resolve(g.id, "yes", 2);
  for (bool open : {false, true}) {
    gs.List(open, 0);
    gs.List(open, t.id);
  }
  gs.CountOpenForTask(t.id);

  store::ReviewRecord r;
  r.mode = "simple";
  r.idem_key = "rk";
  r.id = rs.Insert(r);
  rs.Get(r.id);
  rs.GetByKey("rk");
  rs.Update(r);
  rs.List(10, 0);
  store::RoundRecordRow round;
  round.review_id = r.id;
  round.task_id = t.id;
  round.id = rs.InsertRound(round);
  rs.UpdateRound(round);
  rs.Rounds(r.id);
  rs.RoundForTask(t.id);
  rs.ClaimStrongSession("s", r.id, 1);

  store::CurrentSchemaVersion(db);
  store::ReadCounter(db, "messages_gone");
  store::ReadCounters(db, "tasks_");
}

}  // namespace

TEST_CASE("query plans: nothing the store runs scans messages, tasks or dispatches",
          "[store][plans]") {
  TempDb t(true);
  ExerciseEveryQuery(*t.db);
  auto texts = t.db->CachedSql();
  CHECK(texts.size() > 100);  // the exercise really ran (every filter shape is a text)
  int checked = 0;
  for (const auto& sql : texts) {
    if (sql.rfind("EXPLAIN", 0) == 0) continue;
    INFO(sql);
    CHECK(FullScans(*t.db, sql) == std::vector<std::string>{});
    ++checked;
  }
  CHECK(checked > 100);
}

TEST_CASE("query plans: the check itself catches full scans, index walks included",
          "[store][plans]") {
  TempDb t(true);
  CHECK(FullScans(*t.db, "SELECT COUNT(*) FROM messages").size() == 1);
  CHECK(FullScans(*t.db, "SELECT seq FROM messages WHERE body = ?").size() == 1);
  // A walk of a whole index is a scan too, even when it avoids a sort.
  auto walk = FullScans(*t.db, "SELECT seq FROM messages INDEXED BY messages_to "
                               "WHERE sender = ? ORDER BY recipient, seq");
  REQUIRE(walk.size() == 1);
  CHECK(walk[0].find("USING") != std::string::npos);
  CHECK(FullScans(*t.db, "SELECT id FROM tasks t WHERE brief = ?").size() == 1);  // an alias
  CHECK(FullScans(*t.db, "SELECT seq FROM messages WHERE recipient = ? ORDER BY seq").empty());
  CHECK(FullScans(*t.db, "SELECT name FROM handles ORDER BY name").empty());  // small table
}

TEST_CASE("query plans: a writer's dispatch finds the terminals of a directory by index",
          "[store][plans]") {
  // Terminals stay small enough to list whole, but closed ones are kept (a flow makes one per
  // run): the read every writer's dispatch makes must not walk them all.
  TempDb t(true);
  store::TerminalStore ts(*t.db);
  ts.RunningInExclusiveDir("/tmp");
  int checked = 0, exclusive_seeks = 0;
  for (const auto& sql : t.db->CachedSql()) {
    if (sql.find("FROM terminals WHERE cwd") == std::string::npos) continue;
    INFO(sql);
    auto st = t.db->Prepare("EXPLAIN QUERY PLAN " + sql);
    while (st.Step()) {
      std::string detail = st.Text(3);
      CHECK(detail.rfind("SCAN", 0) != 0);
      if (detail.find("terminals") != std::string::npos) {
        CHECK(detail.find("INDEX terminals_cwd (cwd=?") != std::string::npos);
        ++checked;
      }
      // Whether the directory has an exclusive terminal is one seek past both columns.
      if (detail.find("exclusive>?") != std::string::npos) ++exclusive_seeks;
    }
  }
  CHECK(checked == 2);  // the terminals running there, and whether one of them is exclusive
  CHECK(exclusive_seeks == 1);
}

TEST_CASE("query plans: open sessions come from the index of tasks that name one, no row read",
          "[store][plans]") {
  // GetStatus's spend lines reread this whenever the store changed; walking every open task
  // (tasks_status) to find the few that name a session cost a row read for each.
  TempDb t(true);
  store::SpendStore(*t.db).OpenSessions();
  int checked = 0;
  for (const auto& sql : t.db->CachedSql()) {
    if (sql.find("JOIN spend_session") == std::string::npos) continue;
    INFO(sql);
    std::vector<std::string> plan;
    auto st = t.db->Prepare("EXPLAIN QUERY PLAN " + sql);
    while (st.Step()) plan.push_back(st.Text(3));
    CHECK(plan == std::vector<std::string>{
                      "SEARCH t USING COVERING INDEX tasks_open_session (status=?)",
                      "SEARCH s USING PRIMARY KEY (session=?)"});
    ++checked;
  }
  CHECK(checked == 1);
}

TEST_CASE("query plans: a starting daemon's running reviews and the flows to clean seek indexes "
          "that hold only those",
          "[store][plans]") {
  // ReviewRounds::Resume read every review (artifacts included) to keep the running ones; the
  // flows' clean-up read every flow, cleaned ones included, on the loop.
  TempDb t(true);
  store::ReviewStore(*t.db).Running();
  store::FlowStore(*t.db).Uncleaned({"ready"}, 1, 10);
  std::map<std::string, std::vector<std::string>> want = {
      {"reviews_running", {"SEARCH reviews USING INDEX reviews_running (status=?)"}},
      {"flows_uncleaned", {"SEARCH flows USING INDEX flows_uncleaned (status=? AND updated_ms<?)"}}};
  int checked = 0;
  for (const auto& sql : t.db->CachedSql()) {
    for (const auto& [index, plan_wanted] : want) {
      if (sql.find("INDEXED BY " + index) == std::string::npos) continue;
      INFO(sql);
      std::vector<std::string> plan;
      auto st = t.db->Prepare("EXPLAIN QUERY PLAN " + sql);
      while (st.Step()) plan.push_back(st.Text(3));
      CHECK(plan == plan_wanted);
      ++checked;
    }
  }
  CHECK(checked == 2);
}

TEST_CASE("query plans: a filter of several arms reads its rows by seq in the merge's order, "
          "without a temporary index or a sort",
          "[store][plans]") {
  // The arms' seqs come merged in order; the rows are read by seq in that order. The outer
  // query has no ORDER BY of its own: its order is the outer loop's, so the plan must stay
  // "merged_arms" outside, each row found by its key, and nothing sorted or gathered first.
  TempDb t(true);
  store::MessageStore ms(*t.db);
  for (bool newest : {false, true}) {
    for (const auto& f : std::vector<domain::MessageFilter>{
             {{}, "h", "", {}, false},          // every (type, read) of one recipient
             {{"worker_done"}, "", "", {7}, false},  // a Wait for a task's worker_done
             {{}, "", "", {1, 2}, true}}) {
      if (newest) {
        ms.Newest(f, 10);
      } else {
        ms.After(f, 0, 10);
      }
    }
  }
  int checked = 0;
  for (const auto& sql : t.db->CachedSql()) {
    if (sql.find("UNION ALL") == std::string::npos || sql.rfind("EXPLAIN", 0) == 0) continue;
    INFO(sql);
    std::vector<std::string> plan;
    auto st = t.db->Prepare("EXPLAIN QUERY PLAN " + sql);
    while (st.Step()) plan.push_back(st.Text(3));
    std::vector<std::string> outer;  // the top level's loops, in nesting order
    for (const auto& d : plan) {
      CHECK(d.find("TEMP B-TREE") == std::string::npos);
      CHECK(d.find("LIST SUBQUERY") == std::string::npos);
      if (d.rfind("SCAN ", 0) == 0 || d.rfind("SEARCH m ", 0) == 0) outer.push_back(d);
    }
    CHECK(outer == std::vector<std::string>{"SCAN merged_arms",
                                            "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)"});
    ++checked;
  }
  CHECK(checked == 6);
}
