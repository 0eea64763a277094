// Unit test: FlowStore::AnyRunning remembers "no flow runs" without a statement, and only for
// as long as that is sure: a flow written through the store, a write undone (a rollback) or
// any SQL run around the store makes it ask the database again.
#include <catch2/catch.hpp>

#include <string>

#include "store/flow_store.h"
#include "temp_db.h"

using namespace conclave;
using conclave::testing::StatementCounter;
using conclave::testing::TempDb;

TEST_CASE("AnyRunning remembers that no flow runs only until a flow is written or a write is "
          "undone",
          "[store][flows]") {
  TempDb t(true);
  store::FlowStore flows(*t.db);
  StatementCounter statements(*t.db, "FROM flows");
  CHECK_FALSE(flows.AnyRunning());
  CHECK(statements.seen == 1);
  CHECK_FALSE(flows.AnyRunning());  // remembered
  CHECK(statements.seen == 1);

  // Written through the store: asked again, and found.
  domain::Flow f;
  f.idem_key = "k";
  f.status = "running";
  f.id = flows.Insert(f);
  CHECK(flows.AnyRunning());
  f.status = "done";
  flows.Update(f);
  CHECK_FALSE(flows.AnyRunning());
  const int asked = statements.seen;
  CHECK_FALSE(flows.AnyRunning());
  CHECK(statements.seen == asked);
  f.status = "running";  // an update while "none" is remembered
  flows.Update(f);
  CHECK(flows.AnyRunning());

  // "None" read inside a transaction that then rolls back: the flow runs again.
  t.db->Begin();
  f.status = "failed";
  flows.Update(f);
  t.db->Rollback();
  t.db->Begin();
  f.status = "running";
  flows.Update(f);
  t.db->Commit();
  t.db->Begin();
  f.status = "done";
  flows.Update(f);
  CHECK_FALSE(flows.AnyRunning());
  t.db->Rollback();
  CHECK(flows.AnyRunning());

  // Running() that finds none is remembered too; SQL run around the store is not trusted.
  t.db->Begin();
  f.status = "done";
  flows.Update(f);
  t.db->Commit();
  CHECK(flows.Running().empty());
  const int before = statements.seen;
  CHECK_FALSE(flows.AnyRunning());
  CHECK(statements.seen == before);
  t.db->Exec("UPDATE flows SET status = 'running'");
  CHECK(flows.AnyRunning());
}
