// SpendStore over a real SQLite file: the totals that migration 0011's triggers keep per family
// and day and per session agree with the sums over the dispatches themselves, after any mix of
// inserts, cost changes and families set later, and after an upgrade of a database that
// already has dispatches.
#include "store/spend_store.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>

#include "store/dispatch_store.h"
#include "temp_db.h"

namespace conclave {
namespace {
using testing::TempDb;

constexpr int64_t kDay = 86400000;

// What the totals must say: summed over the rows (each cost in whole micro-dollars), as the
// store summed them before 0011.
std::map<std::string, double> SummedFamilies(store::Database& db, int64_t day) {
  auto st = db.Prepare(
      "SELECT family, SUM(CAST(ROUND(cost_usd * 1e6) AS INTEGER)) FROM dispatches "
      "WHERE family != '' AND created_ms >= ? AND created_ms < ? GROUP BY family");
  st.Bind(1, day * kDay).Bind(2, (day + 1) * kDay);
  std::map<std::string, double> out;
  while (st.Step()) out[st.Text(0)] = static_cast<double>(st.Int(1)) / 1e6;
  return out;
}

std::map<std::string, double> SummedSessions(store::Database& db) {
  auto st = db.Prepare(
      "SELECT t.session, COALESCE(SUM(CAST(ROUND(d.cost_usd * 1e6) AS INTEGER)), 0) FROM tasks t "
      "LEFT JOIN dispatches d ON d.task_id = t.id WHERE t.session != '' GROUP BY t.session");
  std::map<std::string, double> out;
  while (st.Step()) out[st.Text(0)] = static_cast<double>(st.Int(1)) / 1e6;
  return out;
}

// Every session total kept (spend_session), listed or not.
std::map<std::string, double> KeptSessions(store::Database& db) {
  auto st = db.Prepare("SELECT session, micros FROM spend_session");
  std::map<std::string, double> out;
  while (st.Step()) out[st.Text(0)] = static_cast<double>(st.Int(1)) / 1e6;
  return out;
}

// Micro-dollar equality: a single update of the smallest step lost would show.
bool SameUsd(double a, double b) { return std::llround(a * 1e6) == std::llround(b * 1e6); }

// Every summed figure, to the micro-dollar; a kept row the rows no longer name (its dispatches
// moved to another family, day or session, or deleted) is listed at 0.
void CheckSame(const std::map<std::string, double>& kept,
               const std::map<std::string, double>& summed) {
  for (const auto& [name, usd] : summed) {
    INFO(name);
    REQUIRE(kept.count(name) == 1);
    CHECK(SameUsd(kept.at(name), usd));
  }
  for (const auto& [name, usd] : kept) {
    INFO(name);
    if (!summed.count(name)) CHECK(SameUsd(usd, 0));
  }
}

void AddTask(store::Database& db, int64_t id, const std::string& session) {
  db.Prepare(
        "INSERT INTO tasks(id, title, brief, status, role, coordinator, created_ms, updated_ms, "
        "session) VALUES (?, 't', 'b', 'ready', 'writer', 'c', 1, 1, ?)")
      .Bind(1, id)
      .Bind(2, session)
      .Run();
}

void AddDispatch(store::Database& db, int64_t task, const std::string& family, int64_t created,
                 double cost) {
  db.Prepare(
        "INSERT INTO dispatches(task_id, target, family, state, attempt, coordinator, "
        "created_ms, cost_usd) VALUES (?, 'x', ?, 'queued', 1, 'c', ?, ?)")
      .Bind(1, task)
      .Bind(2, family)
      .Bind(3, created)
      .Bind(4, cost)
      .Run();
}

TEST_CASE("spend totals follow every dispatch's cost and family, by day and by session",
          "[store][spend]") {
  TempDb t(true);
  store::Database& db = *t.db;
  store::SpendStore spend(db);
  const char* sessions[] = {"", "s1", "s2"};
  for (int64_t task = 1; task <= 6; ++task) AddTask(db, task, sessions[task % 3]);
  AddTask(db, 7, "idle-session");  // listed, with nothing spent
  const char* families[] = {"", "anthropic", "openai", "qwen"};
  uint64_t seed = 42;
  auto next = [&](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  for (int op = 0; op < 400; ++op) {
    int64_t rows = 0;
    {
      auto st = db.Prepare("SELECT COALESCE(MAX(id), 0) FROM dispatches");
      st.Step();
      rows = st.Int(0);
    }
    if (rows == 0 || next(3) == 0) {
      // Created on one of three days, most at no cost yet, some already spent.
      double cost = next(4) == 0 ? static_cast<double>(next(5000)) / 1000 : 0;
      AddDispatch(db, 1 + next(6), families[next(4)], (20000 + next(3)) * kDay + next(kDay), cost);
    } else if (int kind = static_cast<int>(next(10)); kind < 5) {
      db.Prepare("UPDATE dispatches SET cost_usd = ? WHERE id = ?")
          .Bind(1, static_cast<double>(next(100000)) / 1000000)
          .Bind(2, static_cast<int64_t>(1 + next(rows)))
          .Run();
    } else if (kind < 8) {
      // Its terminal's family, set when it starts (or anything else a later writer does).
      db.Prepare("UPDATE dispatches SET family = ? WHERE id = ?")
          .Bind(1, std::string(families[next(4)]))
          .Bind(2, static_cast<int64_t>(1 + next(rows)))
          .Run();
    } else if (kind == 8) {
      // What the store never does, followed all the same: another task, day or session.
      db.Prepare("UPDATE dispatches SET task_id = ?, created_ms = created_ms + ? WHERE id = ?")
          .Bind(1, static_cast<int64_t>(1 + next(6)))
          .Bind(2, static_cast<int64_t>(next(2) * kDay))
          .Bind(3, static_cast<int64_t>(1 + next(rows)))
          .Run();
      db.Prepare("UPDATE tasks SET session = ? WHERE id = ?")
          .Bind(1, std::string(sessions[next(3)]))
          .Bind(2, static_cast<int64_t>(1 + next(6)))
          .Run();
    } else {
      db.Prepare("DELETE FROM dispatches WHERE id = ?")
          .Bind(1, static_cast<int64_t>(1 + next(rows + 5)))
          .Run();
    }
  }
  for (int64_t day = 19999; day <= 20004; ++day) {
    INFO("day " << day);
    CheckSame(spend.FamiliesOnDay(day * kDay), SummedFamilies(db, day));
    for (const char* f : {"anthropic", "openai", "qwen", "none"}) {
      auto summed = SummedFamilies(db, day);
      CHECK(SameUsd(spend.FamilyOnDay(f, day * kDay), summed.count(f) ? summed[f] : 0));
    }
  }
  CHECK(!spend.FamiliesOnDay(20000 * kDay).empty());
  auto kept = KeptSessions(db);
  CheckSame(kept, SummedSessions(db));
  // Every task here is open: the sessions listed are exactly those a task names.
  auto open = spend.OpenSessions();
  auto named = SummedSessions(db);
  CHECK(open.size() == named.size());
  CheckSame(open, named);
  CHECK(kept.at("idle-session") == 0);
  for (const char* s : {"s1", "s2", "none"}) {
    auto summed = SummedSessions(db);
    CHECK(SameUsd(spend.Session(s), summed.count(s) ? summed[s] : 0));
  }
}

TEST_CASE("a family's day is listed from its first dispatch on, before anything is spent",
          "[store][spend]") {
  TempDb t(true);
  store::SpendStore spend(*t.db);
  AddTask(*t.db, 1, "");
  AddDispatch(*t.db, 1, "anthropic", 5 * kDay + 10, 0);
  AddDispatch(*t.db, 1, "", 5 * kDay + 20, 0);  // queued for a group: no family yet
  auto day = spend.FamiliesOnDay(5 * kDay);
  REQUIRE(day.size() == 1);
  CHECK(day.at("anthropic") == 0);
  CHECK(spend.FamiliesOnDay(6 * kDay).empty());
}

TEST_CASE("upgrading to 0011 fills the totals from the dispatches already recorded",
          "[store][spend]") {
  TempDb t;
  std::vector<store::Migration> before;
  for (const auto& m : store::EmbeddedMigrations()) {
    if (m.version < 11) before.push_back(m);
  }
  REQUIRE(store::ApplyMigrations(*t.db, before).ok());
  AddTask(*t.db, 1, "s1");
  AddTask(*t.db, 2, "");
  AddTask(*t.db, 3, "s-empty");
  AddDispatch(*t.db, 1, "anthropic", 9 * kDay + 1, 0.25);
  AddDispatch(*t.db, 1, "anthropic", 9 * kDay + 2, 0.5);
  AddDispatch(*t.db, 2, "openai", 9 * kDay + 3, 1.125);
  AddDispatch(*t.db, 2, "openai", 10 * kDay + 3, 2);
  AddDispatch(*t.db, 2, "qwen", 11 * kDay, 1e20);  // a parser's absurd figure, twice: counted
  AddDispatch(*t.db, 2, "qwen", 11 * kDay, 1e20);  // as $1e9 each, no integer overflow
  REQUIRE(store::ApplyMigrations(*t.db, store::EmbeddedMigrations()).ok());
  store::SpendStore spend(*t.db);
  CheckSame(spend.FamiliesOnDay(9 * kDay), {{"anthropic", 0.75}, {"openai", 1.125}});
  CheckSame(spend.FamiliesOnDay(10 * kDay), {{"openai", 2}});
  CheckSame(KeptSessions(*t.db), {{"s1", 0.75}, {"s-empty", 0}});
  CheckSame(spend.FamiliesOnDay(11 * kDay), {{"qwen", 2e9}});
  // An outer conflict clause does not turn the triggers' row creation into a failure.
  t.db->Exec(
      "INSERT OR ABORT INTO dispatches(task_id, target, family, state, attempt, coordinator, "
      "created_ms) VALUES (1, 'x', 'anthropic', 'queued', 1, 'c', 777600005)");
  CheckSame(spend.FamiliesOnDay(9 * kDay), {{"anthropic", 0.75}, {"openai", 1.125}});
}

TEST_CASE("the dispatch store's updates move the totals exactly when cost or family changes",
          "[store][spend]") {
  TempDb t(true);
  AddTask(*t.db, 1, "s1");
  store::DispatchStore ds(*t.db);
  store::SpendStore spend(*t.db);
  store::DispatchRecord d;
  d.task_id = 1;
  d.target = "w";
  d.coordinator = "c";
  d.created_ms = 3 * kDay + 5;
  d.id = ds.Insert(d);    // queued for a group: no family yet
  REQUIRE(ds.Get(d.id));  // cached: an update that leaves cost and family alone skips them
  d.state = domain::DispatchState::kRunning;
  d.family = "anthropic";
  ds.Update(d);
  CheckSame(spend.FamiliesOnDay(3 * kDay), {{"anthropic", 0}});
  d.cost_usd = 0.125;
  ds.Update(d);
  d.state = domain::DispatchState::kSucceeded;
  // The UPDATE texts compiled so far that write cost_usd (or, with false, that leave it out).
  auto updates = [&](bool writing_cost) {
    int n = 0;
    for (const auto& sql : t.db->CachedSql()) {
      bool writes = sql.find("cost_usd = ?") != std::string::npos;
      n += sql.rfind("UPDATE dispatches", 0) == 0 && writes == writing_cost;
    }
    return n;
  };
  REQUIRE(updates(false) == 0);
  REQUIRE(updates(true) == 1);
  ds.Update(d);  // cost and family as they were: neither is written, so no trigger runs
  CHECK(updates(false) == 1);
  d.cost_usd = 0.5;
  ds.Update(d);
  CheckSame(spend.FamiliesOnDay(3 * kDay), {{"anthropic", 0.5}});
  CheckSame(KeptSessions(*t.db), {{"s1", 0.5}});
  CheckSame(SummedFamilies(*t.db, 3), {{"anthropic", 0.5}});
  store::DispatchStore fresh(*t.db);  // nothing cached: both columns are written
  d.family = "openai";
  fresh.Update(d);
  CheckSame(spend.FamiliesOnDay(3 * kDay), {{"anthropic", 0}, {"openai", 0.5}});
  CheckSame(KeptSessions(*t.db), {{"s1", 0.5}});
}

// GetStatus lists the sessions with work still open, not every session the store has seen
// (each flow makes one): a finished session's total is kept, and listed again when a task
// joins it.
TEST_CASE("only sessions with an open task are listed, their totals kept when they finish",
          "[store][spend]") {
  TempDb t(true);
  auto set_status = [&](int64_t id, const std::string& status) {
    t.db->Prepare("UPDATE tasks SET status = ? WHERE id = ?").Bind(1, status).Bind(2, id).Run();
  };
  AddTask(*t.db, 1, "open");
  AddTask(*t.db, 2, "open");
  AddTask(*t.db, 3, "done");
  AddTask(*t.db, 4, "");
  AddDispatch(*t.db, 1, "anthropic", 3 * kDay, 0.25);
  AddDispatch(*t.db, 2, "anthropic", 3 * kDay, 0.5);
  AddDispatch(*t.db, 3, "openai", 3 * kDay, 2);
  AddDispatch(*t.db, 4, "openai", 3 * kDay, 4);
  store::SpendStore spend(*t.db);
  CheckSame(spend.OpenSessions(), {{"open", 0.75}, {"done", 2}});
  set_status(3, "completed");
  set_status(1, "failed");  // its session is still open through task 2
  CheckSame(spend.OpenSessions(), {{"open", 0.75}});
  CHECK(spend.OpenSessions().count("done") == 0);
  for (const char* open : {"pending", "dispatched", "blocked"}) {
    set_status(2, open);
    CheckSame(spend.OpenSessions(), {{"open", 0.75}});
  }
  set_status(2, "cancelled");
  CHECK(spend.OpenSessions().empty());
  CHECK(SameUsd(spend.Session("done"), 2));  // still counted against the session's cap
  AddTask(*t.db, 5, "done");
  CheckSame(spend.OpenSessions(), {{"done", 2}});
}

TEST_CASE("open sessions are read without visiting the open tasks that name none",
          "[store][spend]") {
  // GetStatus rereads these whenever the store changed: thousands of queued tasks in no
  // session must cost it nothing, and no task row is read for those that name one.
  TempDb t(true);
  t.db->Begin();
  for (int64_t id = 1; id <= 3000; ++id) AddTask(*t.db, id, "");
  for (int64_t id = 3001; id <= 3003; ++id) AddTask(*t.db, id, "s" + std::to_string(id % 2));
  t.db->Commit();
  AddDispatch(*t.db, 3001, "anthropic", 3 * kDay, 0.5);
  store::SpendStore spend(*t.db);
  spend.OpenSessions();  // compiled and cached: the fetches below are the read's own
  int64_t before = t.db->PageFetches();
  auto open = spend.OpenSessions();
  int64_t fetches = t.db->PageFetches() - before;
  CheckSame(open, {{"s1", 0.5}, {"s0", 0}});
  CHECK(open.size() == 2);
  // The walk of every open task fetched 198 pages here (each leaf of tasks_status and of the
  // table under it); three index entries and two session rows take 3.
  CAPTURE(fetches);
  CHECK(fetches <= 12);
}
}  // namespace
}  // namespace conclave
