// Unit tests: the flow lifecycle (domain/flow) — legal moves, terminal steps, history.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "domain/flow.h"

namespace conclave::domain {
namespace {

TEST_CASE("Flow: the happy path and fix rounds are legal moves", "[flow]") {
  Flow f;
  f.id = 7;
  f.task_id = 3;
  REQUIRE(MoveFlow(f, FlowStep::kImplement, 10, "worktree made").ok());
  CHECK(f.task_id == 0);  // a new step has no task yet
  CHECK(f.status == "running");
  REQUIRE(MoveFlow(f, FlowStep::kVerify, 20, "").ok());
  REQUIRE(MoveFlow(f, FlowStep::kImplement, 30, "verify failed").ok());  // a fix round
  REQUIRE(MoveFlow(f, FlowStep::kVerify, 40, "").ok());
  REQUIRE(MoveFlow(f, FlowStep::kReview, 50, "").ok());
  REQUIRE(MoveFlow(f, FlowStep::kImplement, 60, "findings").ok());
  REQUIRE(MoveFlow(f, FlowStep::kReview, 70, "no verify commands").ok());
  REQUIRE(MoveFlow(f, FlowStep::kReady, 80, "APPROVED").ok());
  CHECK(f.status == "ready");
  auto h = nlohmann::json::parse(f.history);
  REQUIRE(h.size() == 8);
  CHECK(h.back()["step"] == "ready");
  CHECK(h.back()["at_ms"] == 80);
}

TEST_CASE("Flow: skipping a step or leaving an end is refused", "[flow]") {
  Flow f;
  CHECK(!MoveFlow(f, FlowStep::kReview, 1, "").ok());  // no worktree → review
  CHECK(!MoveFlow(f, FlowStep::kReady, 1, "").ok());   // ready only from review
  CHECK(f.step == FlowStep::kWorktree);
  REQUIRE(MoveFlow(f, FlowStep::kNeedsHuman, 2, "").ok());
  CHECK(f.status == "needs_human");
  // Stopped for a person: only a person's decision moves it — another round, a sign-off
  // (ready) or cancel; never straight into verify or review.
  for (auto to : {FlowStep::kVerify, FlowStep::kReview, FlowStep::kWorktree, FlowStep::kFailed}) {
    auto s = MoveFlow(f, to, 3, "");
    CHECK(!s.ok());
    CHECK(s.message().find("needs_human") != std::string::npos);
  }
  for (auto to : {FlowStep::kImplement, FlowStep::kReady, FlowStep::kCancelled}) {
    Flow g = f;
    CHECK(MoveFlow(g, to, 3, "a person decided").ok());
  }
  // The other ends stay ends.
  for (auto end : {FlowStep::kReady, FlowStep::kFailed, FlowStep::kCancelled}) {
    Flow e;
    e.step = end;
    CHECK(!MoveFlow(e, FlowStep::kImplement, 4, "").ok());
  }
}

TEST_CASE("Flow: step names round-trip and task keys are deterministic", "[flow]") {
  for (auto s : {FlowStep::kWorktree, FlowStep::kImplement, FlowStep::kVerify, FlowStep::kReview,
                 FlowStep::kReady, FlowStep::kNeedsHuman, FlowStep::kFailed, FlowStep::kCancelled}) {
    CHECK(ParseFlowStep(FlowStepName(s)) == s);
  }
  CHECK(!ParseFlowStep("done").has_value());
  CHECK(FlowTaskKey(4, 2, "implement") == "flow:4:round2:implement");
  CHECK(FlowTaskKey(4, 2, "implement") != FlowTaskKey(4, 3, "implement"));
}

}  // namespace
}  // namespace conclave::domain

namespace conclave::domain {
namespace {

TEST_CASE("flow scopes: a SCOPE line and the list under it, normalised", "[flow]") {
  CHECK(FlowScopes("Do it.\nSCOPE: ./src//net/, docs/api.md\n- tests/net\n-  `include/x.h`\nTASK: go\n- not/scope\n") ==
        std::vector<std::string>{"src/net", "docs/api.md", "tests/net", "include/x.h"});
  CHECK(FlowScopes("no scope here\n").empty());
  CHECK(FlowScopes("  SCOPE: .\n") == std::vector<std::string>{""});  // the whole repository
}

TEST_CASE("flow scopes overlap when one path is equal to, inside or around another", "[flow]") {
  using V = std::vector<std::string>;
  CHECK(ScopesOverlap(V{"src"}, V{"src/a.cpp"}));
  CHECK(ScopesOverlap(V{"src/a.cpp"}, V{"src"}));
  CHECK(ScopesOverlap(V{"docs", "src/a.cpp"}, V{"src/a.cpp"}));
  CHECK_FALSE(ScopesOverlap(V{"src/a.cpp"}, V{"src/ab.cpp"}));  // a path boundary, not a prefix
  CHECK_FALSE(ScopesOverlap(V{"src"}, V{"srcx"}));
  CHECK(ScopesOverlap(V{""}, V{"anything"}));  // "." declares the whole repository
  CHECK_FALSE(ScopesOverlap(V{}, V{"src"}));   // no declared scope: nothing to serialise
}

TEST_CASE("flow terminals are known by their handle, and take only their flow's tasks", "[flow]") {
  CHECK(FlowOfTerminal("flow-12-writer") == 12);
  CHECK(FlowOfTerminal("flow-3-verify") == 3);
  CHECK(FlowOfTerminal("flow-3-writer-deepseek-flash") == 3);  // after a writer swap
  CHECK(FlowOfTerminal("flow-x-writer") == 0);
  CHECK(FlowOfTerminal("flow--writer") == 0);
  CHECK(FlowOfTerminal("flow-12-other") == 0);
  CHECK(FlowOfTerminal("w1") == 0);
  CHECK(IsFlowTask(12, FlowTaskKey(12, 2, "implement")));
  CHECK_FALSE(IsFlowTask(1, FlowTaskKey(12, 1, "implement")));  // flow 1 is not flow 12
  CHECK_FALSE(IsFlowTask(12, ""));
}

}  // namespace
}  // namespace conclave::domain
