// Service-level test of cleaning flows (service/flow_service): while a clean removes a flow's
// worktree on the helpers' thread, a person's decision on the flow's gate is refused (the gate
// stays open, so the decision is not lost on a flow that ends up cleaned) and no other clean
// takes the flow.
#include <catch2/catch.hpp>

#include <optional>

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

}  // namespace
}  // namespace conclave
