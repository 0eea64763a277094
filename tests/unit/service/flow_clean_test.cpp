// Service-level test of cleaning flows (service/flow_service): while a clean removes a flow's
// worktree on the helpers' thread, a person's decision on the flow's gate is refused (the gate
// stays open, so the decision is not lost on a flow that ends up cleaned) and no other clean
// takes the flow.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "service_harness.h"
#include "store/flow_store.h"
#include "store/gate_store.h"

namespace conclave {
namespace {
using testing::ServiceHarness;

TEST_CASE("a flow being cleaned refuses its gate's decision and a second clean",
          "[service][flows]") {
  ServiceHarness h;
  store::FlowStore flows(*h.db);
  domain::Flow f;
  f.idem_key = "k";
  f.status = "needs_human";
  f.step = domain::FlowStep::kNeedsHuman;
  f.repo = h.dir;
  f.worktree = h.dir + "/gone";  // not on disk: the clean's git is `worktree prune` only
  f.writer = "w";
  f.writer_family = "anthropic";
  domain::Gate g;
  g.question = "the flow stopped: what now?";
  g.options = R"(["another-round","cancel"])";
  REQUIRE(h.core->batcher
              .Write([&]() -> Status {
                f.id = flows.Insert(f);
                g.flow_id = f.id;
                g.id = h.core->gates.Insert(g);
                return Status::Ok();
              })
              .ok());
  h.Settle();

  h.commands.Hold("prune");  // the worktree's removal "runs" until Release()
  struct ReleaseAtExit {  // a failed REQUIRE must not leave a helper thread held
    testing::FakeCommandRunner& c;
    ~ReleaseAtExit() { c.Release(); }
  } release_at_exit{h.commands};
  std::optional<StatusOr<std::vector<service::FlowView>>> cleaned, again, by_id;
  h.services->flows.Clean(0, [&](auto r) { cleaned = std::move(r); });
  REQUIRE(h.RunUntil([&] { return h.commands.held() == 1; }));

  std::optional<StatusOr<domain::Gate>> decided;
  h.services->gates.Resolve(g.id, "another-round", {}, "go on",
                            [&](StatusOr<domain::Gate> r) { decided = std::move(r); });
  REQUIRE(h.RunUntil([&] { return decided.has_value(); }));
  REQUIRE_FALSE(decided->ok());
  CHECK(decided->status().code() == Code::kFailedPrecondition);
  CHECK(decided->status().message().find("is being cleaned") != std::string::npos);
  CHECK(h.core->gates.Get(g.id)->status == "open");  // the decision is not lost
  CHECK(flows.Get(f.id)->status == "needs_human");

  h.services->flows.Clean(f.id, [&](auto r) { by_id = std::move(r); });
  REQUIRE(by_id.has_value());  // refused at once, on the loop
  CHECK(by_id->status().code() == Code::kFailedPrecondition);
  h.services->flows.Clean(0, [&](auto r) { again = std::move(r); });

  h.commands.Release();
  REQUIRE(h.RunUntil([&] { return cleaned.has_value() && again.has_value(); }));
  REQUIRE(cleaned->ok());
  REQUIRE(cleaned->value().size() == 1);
  CHECK(flows.Get(f.id)->cleaned);
  REQUIRE(again->ok());
  CHECK(again->value().empty());  // the second clean did not take the flow
  // Cleaned, the flow is no longer reopened; the gate can be settled.
  decided.reset();
  h.services->gates.Resolve(g.id, "another-round", {}, "go on",
                            [&](StatusOr<domain::Gate> r) { decided = std::move(r); });
  REQUIRE(h.RunUntil([&] { return decided.has_value(); }));
  CHECK(decided->ok());
  CHECK(flows.Get(f.id)->status == "needs_human");
}

// Ended flows, each in its own write, last changed at updated_ms.
std::vector<int64_t> InsertEnded(ServiceHarness& h, store::FlowStore& flows,
                                 const std::string& status, int n, int64_t updated_ms) {
  std::vector<int64_t> ids;
  REQUIRE(h.core->batcher
              .Write([&]() -> Status {
                for (int i = 0; i < n; ++i) {
                  domain::Flow f;
                  f.idem_key = status + std::to_string(i) + "@" + std::to_string(updated_ms);
                  f.status = status;
                  f.step = status == "ready" ? domain::FlowStep::kReady
                                             : domain::FlowStep::kCancelled;
                  f.repo = h.dir;
                  f.worktree = h.dir + "/gone";  // not on disk: only `worktree prune` runs
                  f.writer = "w";
                  f.writer_family = "anthropic";
                  f.updated_ms = updated_ms;
                  ids.push_back(flows.Insert(f));
                }
                return Status::Ok();
              })
              .ok());
  h.Settle();
  return ids;
}

int CountCleaned(store::FlowStore& flows, const std::vector<int64_t>& ids) {
  int n = 0;
  for (int64_t id : ids) n += flows.Get(id)->cleaned ? 1 : 0;
  return n;
}

// Retention takes 100 flows of a status at a time; a full batch asks for the next, so a
// backlog larger than a batch drains whole, and what ended after the cutoff stays.
TEST_CASE("retention cleans a backlog of ended flows batch after batch, and no later one",
          "[service][flows]") {
  ServiceHarness h;
  store::FlowStore flows(*h.db);
  auto ready = InsertEnded(h, flows, "ready", 250, 1000);
  auto cancelled = InsertEnded(h, flows, "cancelled", 120, 1000);
  auto recent = InsertEnded(h, flows, "ready", 3, 5000);
  h.services->flows.CleanEndedBefore(2000);
  REQUIRE(h.RunUntil([&] {
    return CountCleaned(flows, ready) == 250 && CountCleaned(flows, cancelled) == 120;
  }));
  h.Settle();
  CHECK(CountCleaned(flows, recent) == 0);
  CHECK(flows.Uncleaned({"ready", "cancelled"}, 2000, -1).empty());
}

// A stopping daemon asks for no further batch: the one under way finishes and is written.
TEST_CASE("retention stops between batches once the flow service is stopped",
          "[service][flows]") {
  ServiceHarness h;
  store::FlowStore flows(*h.db);
  auto ready = InsertEnded(h, flows, "ready", 150, 1000);
  h.commands.Hold("prune");
  struct ReleaseAtExit {
    testing::FakeCommandRunner& c;
    ~ReleaseAtExit() { c.Release(); }
  } release_at_exit{h.commands};
  h.services->flows.CleanEndedBefore(2000);
  REQUIRE(h.RunUntil([&] { return h.commands.held() == 1; }));  // the first batch is under way
  h.services->flows.Stop();
  h.commands.Release();
  REQUIRE(h.RunUntil([&] { return CountCleaned(flows, ready) == 100; }));
  // The next batch would have been taken by the first one's commit, on the loop: a clean now
  // finds the other 50 free (it skips flows another clean has taken).
  std::optional<StatusOr<std::vector<service::FlowView>>> rest;
  h.services->flows.Clean(0, [&](auto r) { rest = std::move(r); });
  REQUIRE(h.RunUntil([&] { return rest.has_value(); }));
  REQUIRE(rest->ok());
  CHECK(rest->value().size() == 50);
  CHECK(CountCleaned(flows, ready) == 150);
}

}  // namespace
}  // namespace conclave
