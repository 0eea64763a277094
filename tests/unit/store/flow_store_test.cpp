// Unit test: FlowStore::AnyRunning remembers "no flow runs" without a statement, and only for
// as long as that is sure: a flow written through the store, a write undone (a rollback) or
// any SQL run around the store makes it ask the database again. And the flows to clean are
// read from an index of the flows not cleaned yet.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

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

TEST_CASE("the flows to clean come from the index of those not cleaned yet, by status and age, "
          "without reading the cleaned ones",
          "[store][flows]") {
  // The retention pass and `flow clean` read these on the loop. They read every flow, cleaned
  // ones included, and stopped at 100,000; cleaned flows pile up over a daemon's life.
  TempDb t(true);
  store::FlowStore flows(*t.db);
  auto add = [&](const std::string& key, const std::string& status, int64_t updated, bool cleaned) {
    domain::Flow f;
    f.idem_key = key;
    f.status = status;
    f.history = std::string(400, 'h');  // a flow's row is not small
    f.updated_ms = updated;
    f.cleaned = cleaned;
    return flows.Insert(f);
  };
  t.db->Begin();
  for (int i = 0; i < 3000; ++i) add("c" + std::to_string(i), "ready", 10, true);
  const int64_t old_ready = add("r-old", "ready", 100, false);
  const int64_t young_ready = add("r-young", "ready", 900, false);
  const int64_t old_cancelled = add("x-old", "cancelled", 50, false);
  add("run", "running", 10, false);  // old, not cleaned, but running: never taken
  const int64_t failed = add("f", "failed", 20, false);
  const int64_t older_ready = add("r-older", "ready", 90, false);
  t.db->Commit();
  auto ids = [](const std::vector<domain::Flow>& fs) {
    std::vector<int64_t> out;
    for (const auto& f : fs) out.push_back(f.id);
    return out;
  };

  flows.Uncleaned({"ready", "cancelled"}, 500, 10);  // compiled: the fetches below are its own
  int64_t before = t.db->PageFetches();
  auto due = flows.Uncleaned({"ready", "cancelled"}, 500, 10);
  int64_t fetches = t.db->PageFetches() - before;
  // Per status, the oldest change first; nothing cleaned, running, failed or too young.
  CHECK(ids(due) == std::vector<int64_t>{older_ready, old_ready, old_cancelled});
  CAPTURE(fetches);
  CHECK(fetches <= 16);  // 12 here; reading every flow fetched 1,518

  // The limit is per status.
  CHECK(ids(flows.Uncleaned({"ready", "cancelled"}, 500, 1)) ==
        std::vector<int64_t>{older_ready, old_cancelled});
  // Every ended status, any age, no limit: what `flow clean` without an id takes.
  CHECK(ids(flows.Uncleaned({"ready", "needs_human", "failed", "cancelled"},
                            std::numeric_limits<int64_t>::max(), -1)) ==
        std::vector<int64_t>{older_ready, old_ready, young_ready, failed, old_cancelled});

  // Cleaned, a flow leaves the index.
  auto f = *flows.Get(old_ready);
  f.cleaned = true;
  flows.Update(f);
  CHECK(ids(flows.Uncleaned({"ready"}, 500, 10)) == std::vector<int64_t>{older_ready});
}
