// Unit tests: review-mode selection and the cross-family rule (domain/review_policy).
#include <catch2/catch.hpp>

#include "domain/review_policy.h"

namespace conclave::domain {
namespace {

const std::vector<ReviewerCandidate> kAvailable = {{"qwen-max", "alibaba"},
                                                   {"deepseek-flash", "deepseek"},
                                                   {"glm", "zhipu"},
                                                   {"luna", "openai"},
                                                   {"claude", "anthropic"}};

ReviewPlanRequest Request(ReviewMode mode, std::string writer) {
  ReviewPlanRequest r;
  r.mode = mode;
  r.writer_family = std::move(writer);
  r.available = kAvailable;
  r.default_profile = "qwen-max";
  r.cap = 2;
  return r;
}

TEST_CASE("mode selection: parallel modes and family collisions", "[review]") {
  ReviewPlan plan = PlanReview(Request(ReviewMode::kMechanical, "deepseek"));
  CHECK(plan.ok);
  CHECK(plan.lines.empty());
  CHECK_FALSE(plan.skip_reason.empty());

  plan = PlanReview(Request(ReviewMode::kSimple, "alibaba"));
  REQUIRE(plan.ok);
  REQUIRE(plan.lines.size() == 1);
  CHECK(plan.lines[0].profile == "deepseek-flash");
  ReviewPlanRequest request = Request(ReviewMode::kSimple, "deepseek");
  request.primary = ReviewerCandidate{"deepseek-flash", "deepseek"};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK(plan.error ==
        "reviewer deepseek-flash (family deepseek) shares the writer's family deepseek");

  plan = PlanReview(Request(ReviewMode::kOrdinary, "deepseek"));
  REQUIRE(plan.ok);
  CHECK(plan.lines.at(0).profile == "qwen-max");
  plan = PlanReview(Request(ReviewMode::kOrdinary, "Alibaba"));  // collides: swapped
  REQUIRE(plan.ok);
  CHECK(plan.lines.at(0).profile == "deepseek-flash");

  plan = PlanReview(Request(ReviewMode::kStrong, "alibaba"));
  REQUIRE(plan.ok);
  REQUIRE(plan.lines.size() == 2);
  CHECK(plan.lines[0].family == "deepseek");
  CHECK(plan.lines[1].family == "zhipu");
  request = Request(ReviewMode::kStrong, "anthropic");
  request.primary = ReviewerCandidate{"luna", "openai"};
  plan = PlanReview(request);
  REQUIRE(plan.ok);
  CHECK(plan.lines[0].profile == "luna");
  CHECK(plan.lines[1].profile == "qwen-max");  // the default profile fills first
  request.challengers = {{"luna-2", "openai"}};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK_THAT(plan.error, Catch::Contains("share the family openai"));
  request = Request(ReviewMode::kStrong, "openai");
  request.available = {{"luna", "openai"}, {"qwen-max", "alibaba"}};
  CHECK_FALSE(PlanReview(request).ok);

  request = Request(ReviewMode::kSimple, "deepseek");
  request.cap = -1;
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK_THAT(plan.error, Catch::Contains("cap"));
  CHECK(ParseReviewMode("Strong") == ReviewMode::kStrong);
  CHECK_FALSE(ParseReviewMode("bogus").has_value());
  CHECK(ReviewModeName(ReviewMode::kDebate) == "debate");
}

TEST_CASE("mode selection: debate primary and challengers", "[review]") {
  ReviewPlanRequest request = Request(ReviewMode::kDebate, "deepseek");
  request.challengers = {{"deepseek-flash", "deepseek"}};
  ReviewPlan plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK(plan.error ==
        "challenger deepseek-flash (family deepseek) shares the writer's family deepseek");
  request.challengers = {{"qwen-plus", "alibaba"}};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK(plan.error == "challenger qwen-plus (family alibaba) shares the primary's family alibaba");

  request = Request(ReviewMode::kDebate, "anthropic");
  request.primary = ReviewerCandidate{"claude", "anthropic"};  // same-source primary allowed
  plan = PlanReview(request);
  REQUIRE(plan.ok);
  CHECK(plan.primary->profile == "claude");
  REQUIRE(plan.challengers.size() == 1);
  CHECK(plan.challengers[0].profile == "qwen-max");
  CHECK(plan.cap == 2);
  request.cap = 0;
  plan = PlanReview(request);
  REQUIRE(plan.ok);
  CHECK(plan.challengers.empty());
  request.cap = 1;
  request.available = {{"claude", "anthropic"}, {"claude-2", "anthropic"}};
  plan = PlanReview(request);
  CHECK_FALSE(plan.ok);
  CHECK_THAT(plan.error, Catch::Contains("anthropic"));
  CHECK(ChallengerIndexForRound(1, 2) == 0);
  CHECK(ChallengerIndexForRound(3, 2) == 1);
  CHECK(ChallengerIndexForRound(5, 2) == 0);
}

}  // namespace
}  // namespace conclave::domain
