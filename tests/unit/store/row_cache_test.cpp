// Unit test: the stores' row caches (store/row_cache.h). A row read again is served without a
// statement, and what a cache serves always equals what a fresh read on the same connection
// returns: after writes (including the columns an UPDATE leaves alone), after a request rolled
// back to its savepoint, and after a failed COMMIT. No store can be copied (a copy would keep a
// cache of its own).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <type_traits>

#include "store/dispatch_store.h"
#include "store/handle_store.h"
#include "store/task_store.h"
#include "store/terminal_store.h"
#include "store/transaction.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::StatementCounter;
using conclave::testing::TempDb;

namespace {

void RequireSameTask(const store::TaskRecord& a, const store::TaskRecord& b) {
  CHECK(a.id == b.id);
  CHECK(a.title == b.title);
  CHECK(a.brief == b.brief);
  CHECK(a.status == b.status);
  CHECK(a.role == b.role);
  CHECK(a.hypothesis == b.hypothesis);
  CHECK(a.scope == b.scope);
  CHECK(a.validation == b.validation);
  CHECK(a.idem_key == b.idem_key);
  CHECK(a.blocked_reason == b.blocked_reason);
  CHECK(a.resume_status == b.resume_status);
  CHECK(a.result == b.result);
  CHECK(a.created_ms == b.created_ms);
  CHECK(a.updated_ms == b.updated_ms);
  CHECK(a.auto_retry == b.auto_retry);
  CHECK(a.auto_retries_used == b.auto_retries_used);
  CHECK(a.coordinator == b.coordinator);
  CHECK(a.session == b.session);
  CHECK(a.budget_usd == b.budget_usd);
  CHECK(a.unmet_deps == b.unmet_deps);
  CHECK(a.breaker_count == b.breaker_count);
  CHECK(a.breaker_fp == b.breaker_fp);
  CHECK(a.last_target == b.last_target);
}

void RequireSameDispatch(const store::DispatchRecord& a, const store::DispatchRecord& b) {
  CHECK(a.id == b.id);
  CHECK(a.task_id == b.task_id);
  CHECK(a.target == b.target);
  CHECK(a.terminal == b.terminal);
  CHECK(a.profile == b.profile);
  CHECK(a.family == b.family);
  CHECK(a.state == b.state);
  CHECK(a.attempt == b.attempt);
  CHECK(a.coordinator == b.coordinator);
  CHECK(a.token == b.token);
  CHECK(a.pid == b.pid);
  CHECK(a.created_ms == b.created_ms);
  CHECK(a.started_ms == b.started_ms);
  CHECK(a.finished_ms == b.finished_ms);
  CHECK(a.exit_code == b.exit_code);
  CHECK(a.failure_kind == b.failure_kind);
  CHECK(a.evidence == b.evidence);
  CHECK(a.cost_usd == b.cost_usd);
  CHECK(a.result == b.result);
  CHECK(a.worker_done == b.worker_done);
  CHECK(a.start_head == b.start_head);
  CHECK(a.op_retries == b.op_retries);
  CHECK(a.proc_start == b.proc_start);
  CHECK(a.not_before_ms == b.not_before_ms);
  CHECK(a.deadline_ms == b.deadline_ms);
  CHECK(a.last_output_ms == b.last_output_ms);
  CHECK(a.timeout_s == b.timeout_s);
  CHECK(a.budget_usd == b.budget_usd);
  CHECK(a.failure_class == b.failure_class);
  CHECK(a.fingerprint == b.fingerprint);
  CHECK(a.cost_estimated == b.cost_estimated);
  CHECK(a.review_round == b.review_round);
}

store::TaskRecord NewTask() {
  store::TaskRecord t;
  t.title = "first";
  t.brief = "do it";
  t.status = domain::TaskState::kReady;
  t.idem_key = "key-1";
  t.coordinator = "boss";
  t.session = "s1";
  t.created_ms = 5;
  t.updated_ms = 5;
  return t;
}

// A migrated database with one task and one queued dispatch of it.
struct TaskWithDispatch {
  TempDb t{true};
  store::TaskStore tasks{*t.db};
  store::DispatchStore dispatches{*t.db};
  int64_t task = tasks.Insert(NewTask());
  store::DispatchRecord d = [this] {
    store::DispatchRecord r;
    r.task_id = task;
    r.target = "w1";
    r.coordinator = "boss";
    r.created_ms = 10;
    r.id = dispatches.Insert(r);
    return r;
  }();
};

}  // namespace

// A copy of a store would keep a cache of its own, stale once the other writes: none compiles.
static_assert(!std::is_copy_constructible_v<store::TaskStore> &&
              !std::is_copy_constructible_v<store::DispatchStore> &&
              !std::is_copy_constructible_v<store::TerminalStore> &&
              !std::is_copy_constructible_v<store::HandleStore>);
static_assert(!std::is_copy_assignable_v<store::TaskStore> &&
              !std::is_copy_assignable_v<store::DispatchStore> &&
              !std::is_copy_assignable_v<store::TerminalStore> &&
              !std::is_copy_assignable_v<store::HandleStore>);

TEST_CASE("row caches: a task read again costs no statement and stays equal to a fresh read") {
  TempDb t{true};
  store::TaskStore tasks{*t.db};
  int64_t id = tasks.Insert(NewTask());
  REQUIRE(tasks.Get(id));

  {
    StatementCounter reads(*t.db, "FROM tasks WHERE id");
    auto again = tasks.Get(id);
    REQUIRE(again);
    CHECK(again->title == "first");
    CHECK(reads.seen == 0);
  }

  // A write through the store: the cached row follows it. The columns this UPDATE does not
  // write (idem_key, created_ms, coordinator, session) keep the values the table has, whatever
  // the caller's copy says.
  auto changed = *tasks.Get(id);
  changed.title = "second";
  changed.status = domain::TaskState::kDispatched;
  changed.result = R"({"ok":true})";
  changed.updated_ms = 9;
  changed.idem_key = "forged";
  changed.created_ms = 77;
  changed.coordinator = "someone-else";
  changed.session = "s2";
  tasks.Update(changed);

  StatementCounter reads(*t.db, "FROM tasks WHERE id");
  auto cached = tasks.Get(id);
  CHECK(reads.seen == 0);
  REQUIRE(cached);
  CHECK(cached->title == "second");
  CHECK(cached->coordinator == "boss");
  store::TaskStore fresh{*t.db};
  auto truth = fresh.Get(id);
  CHECK(reads.seen == 1);
  REQUIRE(truth);
  RequireSameTask(*cached, *truth);
}

TEST_CASE("row caches: a request rolled back to its savepoint is never served afterwards") {
  TaskWithDispatch f;
  auto& [t, tasks, dispatches, id, d] = f;

  store::Transaction txn(*t.db);
  txn.Begin();
  txn.OpenSavepoint();
  auto task = *tasks.Get(id);
  task.status = domain::TaskState::kDispatched;
  tasks.Update(task);
  auto run = *dispatches.Get(d.id);
  run.state = domain::DispatchState::kRunning;
  run.pid = 4242;
  dispatches.Update(run);
  CHECK(tasks.Get(id)->status == domain::TaskState::kDispatched);
  CHECK(dispatches.Get(d.id)->pid == 4242);
  txn.RollbackSavepoint();  // the request failed

  CHECK(tasks.Get(id)->status == domain::TaskState::kReady);
  CHECK(dispatches.Get(d.id)->state == domain::DispatchState::kQueued);
  CHECK(dispatches.Get(d.id)->pid == 0);
  CHECK(txn.Commit().ok());
  store::TaskStore fresh_tasks{*t.db};
  store::DispatchStore fresh_dispatches{*t.db};
  RequireSameTask(*tasks.Get(id), *fresh_tasks.Get(id));
  RequireSameDispatch(*dispatches.Get(d.id), *fresh_dispatches.Get(d.id));
}

TEST_CASE("row caches: after a failed COMMIT the rows read are the table's, not the lost batch's") {
  TempDb t{true};
  store::TaskStore tasks{*t.db};
  int64_t id = tasks.Insert(NewTask());
  REQUIRE(tasks.Get(id));

  store::Transaction txn(*t.db);
  txn.Begin();
  txn.OpenSavepoint();
  auto task = *tasks.Get(id);
  task.title = "never committed";
  tasks.Update(task);
  txn.ReleaseSavepoint();
  t.db->SetFaultHookForTest([](std::string_view sql) { return sql == "COMMIT" ? SQLITE_IOERR : 0; });
  CHECK_FALSE(txn.Commit().ok());
  t.db->SetFaultHookForTest(nullptr);

  CHECK(tasks.Get(id)->title == "first");
  store::TaskStore fresh{*t.db};
  RequireSameTask(*tasks.Get(id), *fresh.Get(id));
}

TEST_CASE("row caches: a dispatch keeps its task and creation time, which its UPDATE never writes") {
  TaskWithDispatch f;
  auto& [t, tasks, dispatches, task, d] = f;
  {
    // The row inserted is the row read: every column but the id was bound.
    StatementCounter reads(*t.db, "FROM dispatches WHERE id");
    auto inserted = dispatches.Get(d.id);
    CHECK(reads.seen == 0);
    store::DispatchStore fresh{*t.db};
    RequireSameDispatch(*inserted, *fresh.Get(d.id));
  }

  auto run = *dispatches.Get(d.id);
  run.task_id = task + 100;
  run.created_ms = 999;
  run.state = domain::DispatchState::kSucceeded;
  run.result = "done";
  run.worker_done = true;
  run.start_head = "abc";
  dispatches.Update(run);

  StatementCounter reads(*t.db, "FROM dispatches WHERE id");
  auto cached = dispatches.Get(d.id);
  CHECK(reads.seen == 0);
  REQUIRE(cached);
  CHECK(cached->task_id == task);
  CHECK(cached->created_ms == 10);
  CHECK(cached->result == "done");
  store::DispatchStore fresh{*t.db};
  RequireSameDispatch(*cached, *fresh.Get(d.id));
}

TEST_CASE("row caches: a terminal and a handle follow the writes their stores make") {
  TempDb t{true};
  store::TerminalStore terminals{*t.db};
  store::HandleStore handles{*t.db};
  store::TerminalRecord term{"w1", "claude", "/src", domain::TerminalState::kIdle, 0, 1, false};
  terminals.Insert(term);
  handles.Insert({"w1", "terminal", 1, false});
  REQUIRE(terminals.Get("w1"));
  REQUIRE(handles.Get("w1"));

  // Save writes the state and the active dispatch only.
  term.state = domain::TerminalState::kBusy;
  term.active_dispatch = 7;
  term.cwd = "/elsewhere";
  term.profile = "codex";
  terminals.Save(term);
  handles.MarkClosed("w1");

  StatementCounter reads(*t.db, "WHERE");
  auto cached_term = terminals.Get("w1");
  auto cached_handle = handles.Get("w1");
  CHECK(reads.seen == 0);
  REQUIRE(cached_term);
  REQUIRE(cached_handle);
  CHECK(cached_term->state == domain::TerminalState::kBusy);
  CHECK(cached_term->active_dispatch == 7);
  CHECK(cached_term->cwd == "/src");
  CHECK(cached_term->profile == "claude");
  CHECK(cached_handle->closed);

  store::TerminalStore fresh_terminals{*t.db};
  store::HandleStore fresh_handles{*t.db};
  auto truth = fresh_terminals.Get("w1");
  REQUIRE(truth);
  CHECK(truth->state == cached_term->state);
  CHECK(truth->active_dispatch == cached_term->active_dispatch);
  CHECK(truth->cwd == cached_term->cwd);
  CHECK(truth->profile == cached_term->profile);
  CHECK(truth->exclusive == cached_term->exclusive);
  CHECK(truth->created_ms == cached_term->created_ms);
  CHECK(fresh_handles.Get("w1")->closed);
}

TEST_CASE("row caches: a big row is read from the table each time, not kept") {
  TempDb t{true};
  store::TaskStore tasks{*t.db};
  auto big = NewTask();
  big.brief = std::string(store::RowCache<int64_t, store::TaskRecord>::kMaxRowBytes + 1, 'b');
  int64_t id = tasks.Insert(big);
  REQUIRE(tasks.Get(id));
  StatementCounter reads(*t.db, "FROM tasks WHERE id");
  REQUIRE(tasks.Get(id));
  CHECK(reads.seen == 1);
}

TEST_CASE("row caches: SQL run through Exec, and a rollback SQLite makes itself, empty them") {
  TempDb t{true};
  store::TaskStore tasks{*t.db};
  int64_t id = tasks.Insert(NewTask());
  REQUIRE(tasks.Get(id)->title == "first");

  t.db->Exec("UPDATE tasks SET title = 'by exec' WHERE id = " + std::to_string(id));
  CHECK(tasks.Get(id)->title == "by exec");

  // A transaction ended by a ROLLBACK that does not pass through Database::Rollback (as when
  // SQLite rolls back by itself after an I/O error): the rollback hook still empties the cache.
  t.db->Begin();
  auto task = *tasks.Get(id);
  task.title = "rolled back";
  tasks.Update(task);
  CHECK(tasks.Get(id)->title == "rolled back");
  REQUIRE(sqlite3_exec(t.db->handle(), "ROLLBACK", nullptr, nullptr, nullptr) == SQLITE_OK);
  CHECK(tasks.Get(id)->title == "by exec");
}

TEST_CASE("row caches: a negative zero is kept as SQLite keeps it") {
  TaskWithDispatch f;
  auto task = *f.tasks.Get(f.task);
  task.budget_usd = -0.0;
  f.tasks.Update(task);
  auto run = *f.dispatches.Get(f.d.id);
  run.cost_usd = -0.0;
  f.dispatches.Update(run);
  CHECK_FALSE(std::signbit(f.tasks.Get(f.task)->budget_usd));
  CHECK_FALSE(std::signbit(f.dispatches.Get(f.d.id)->cost_usd));
  store::TaskStore fresh{*f.t.db};
  CHECK(std::signbit(fresh.Get(f.task)->budget_usd) ==
        std::signbit(f.tasks.Get(f.task)->budget_usd));
}
