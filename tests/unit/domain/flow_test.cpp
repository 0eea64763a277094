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
  for (auto to : {FlowStep::kImplement, FlowStep::kReady, FlowStep::kCancelled}) {
    auto s = MoveFlow(f, to, 3, "");
    CHECK(!s.ok());
    CHECK(s.message().find("needs_human") != std::string::npos);
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
