// Unit test: DispatchStore::Update writes what changes on a dispatch and leaves the indexes over
// what never changes (its task, its creation time) alone.
#include <catch2/catch.hpp>

#include <set>

#include "store/dispatch_store.h"
#include "store/task_store.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::TempDb;

namespace {

struct Fixture {
  TempDb t{true};
  store::TaskStore tasks{*t.db};
  store::DispatchStore dispatches{*t.db};
  store::DispatchRecord d;
  Fixture() {
    store::TaskRecord task;
    task.title = "t";
    task.status = domain::TaskState::kPending;
    int64_t task_id = tasks.Insert(task);
    d.task_id = task_id;
    d.target = "@idle";
    d.family = "f";
    d.coordinator = "c";
    d.created_ms = 1000;
    d.id = dispatches.Insert(d);
  }
};

// Root pages of the b-trees an SQL text opens for writing (OpenWrite's p2 in its bytecode).
std::set<int64_t> WrittenRoots(store::Database& db, const std::string& sql) {
  std::set<int64_t> roots;
  auto st = db.Prepare("EXPLAIN " + sql);
  while (st.Step()) {
    if (st.Text(1) == "OpenWrite") roots.insert(st.Int(3));
  }
  return roots;
}

int64_t RootOf(store::Database& db, const std::string& index) {
  auto st = db.Prepare("SELECT rootpage FROM sqlite_schema WHERE name = ?");
  st.Bind(1, index);
  REQUIRE(st.Step());
  return st.Int(0);
}

}  // namespace

TEST_CASE("DispatchStore::Update persists what a run changes, a terminal chosen late included") {
  Fixture f;
  auto d = f.d;
  d.terminal = "w2";  // a queued @idle dispatch gets its terminal when it starts
  d.state = domain::DispatchState::kSucceeded;
  d.pid = 4242;
  d.started_ms = 2000;
  d.finished_ms = 3000;
  d.exit_code = 3;
  d.result = "done";
  d.worker_done = true;
  d.start_head = "abc";
  f.dispatches.Update(d);

  auto got = f.dispatches.Get(d.id);
  REQUIRE(got);
  CHECK(got->terminal == "w2");
  CHECK(got->state == domain::DispatchState::kSucceeded);
  CHECK(got->pid == 4242);
  CHECK(got->started_ms == 2000);
  CHECK(got->finished_ms == 3000);
  CHECK(got->exit_code == 3);
  CHECK(got->result == "done");
  CHECK(got->worker_done);
  CHECK(got->start_head == "abc");
  CHECK(got->task_id == f.d.task_id);
  CHECK(got->created_ms == 1000);
  CHECK(f.dispatches.ForTask(f.d.task_id).size() == 1);
  CHECK(f.dispatches.InState(domain::DispatchState::kSucceeded).size() == 1);
}

TEST_CASE("DispatchStore::Update rewrites no index over the task or the creation time") {
  Fixture f;
  f.dispatches.Update(f.d);
  std::string update;
  for (const auto& sql : f.t.db->CachedSql()) {
    if (sql.rfind("UPDATE dispatches SET", 0) == 0) update = sql;
  }
  REQUIRE_FALSE(update.empty());
  auto roots = WrittenRoots(*f.t.db, update);
  // What it must still write: the table, and the indexes over state and terminal.
  CHECK(roots.count(RootOf(*f.t.db, "dispatches")) == 1);
  CHECK(roots.count(RootOf(*f.t.db, "dispatches_state")) == 1);
  CHECK(roots.count(RootOf(*f.t.db, "dispatches_terminal")) == 1);
  CHECK(roots.count(RootOf(*f.t.db, "dispatches_task")) == 0);
  CHECK(roots.count(RootOf(*f.t.db, "dispatches_created")) == 0);
}
