// Service-level tests of ReviewService: no re-rolls (an identical artifact is refused, open
// foreign findings are carried and must be answered), the fix-round limit, the Strong session
// rule, --measure. Real SQLite, fake clock, fake launcher.
#include <catch2/catch.hpp>

#include "review_harness.h"

namespace conclave {
namespace {
using testing::Finding;
using testing::ReviewHarness;

const std::string kBad = "diff --git a/a b/a\n+leak(secret)\n";

service::RegateInput Artifact(const std::string& text) {
  service::RegateInput in;
  in.artifact = text;
  return in;
}

// A simple review by chal that raised one foreign BLOCKER.
int64_t Blocked(ReviewHarness& h, std::optional<int> max_fix_rounds = std::nullopt) {
  service::StartReviewInput in;
  in.mode = "simple";
  in.primary = "chal";
  in.artifact = kBad;
  in.max_fix_rounds = max_fix_rounds;
  auto v = h.Start(in);
  REQUIRE(v.ok());
  h.Answer("[" + Finding("B1", "BLOCKER", "new") + "]");
  REQUIRE(h.Done(v->review.id));
  REQUIRE(h.Review(v->review.id).verdict == "BLOCKED");
  return v->review.id;
}

TEST_CASE("no re-rolls: the same artifact again is refused with FAILED_PRECONDITION",
          "[service][review]") {
  ReviewHarness h;
  int64_t id = Blocked(h);
  auto again = h.Regate(id, Artifact(kBad));
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().code() == Code::kFailedPrecondition);
  CHECK_THAT(again.status().message(), Catch::Contains("identical"));
  // --retry-absent is for an absent gate only.
  service::RegateInput retry = Artifact(kBad);
  retry.retry_absent = true;
  auto not_absent = h.Regate(id, retry);
  REQUIRE_FALSE(not_absent.ok());
  CHECK_THAT(not_absent.status().message(), Catch::Contains("not gate-absent"));
  CHECK(h.Review(id).revision == 1);
  CHECK(h.launcher.launches.size() == 1);
}

TEST_CASE("no re-rolls: a quiet reviewer cannot turn a foreign BLOCKER into APPROVED",
          "[service][review]") {
  ReviewHarness h;
  int64_t id = Blocked(h);
  // A changed artifact, and the reviewer says nothing at all about B1.
  REQUIRE(h.Regate(id, Artifact(kBad + "+// touched\n")).ok());
  auto* run = h.NextRun();
  REQUIRE(run);
  CHECK_THAT(h.Brief(run), Catch::Contains("r0.openai.B1") && Catch::Contains("OPEN FINDINGS"));
  h.Answer("[]");
  REQUIRE(h.Done(id));
  auto r = h.Review(id);
  CHECK(r.verdict == "BLOCKED");
  CHECK_THAT(r.findings, Catch::Contains("r0.openai.B1") && Catch::Contains("\"carried\":true"));
  // Its own family answering fixed on a new revision closes it (another family's "fixed"
  // would not: domain/carry_over_test).
  REQUIRE(h.Regate(id, Artifact(kBad + "+// fixed\n")).ok());
  h.Answer("[" + Finding("r0.openai.B1", "BLOCKER", "fixed") + "]");
  REQUIRE(h.Done(id));
  CHECK(h.Review(id).verdict == "APPROVED");
  CHECK(h.Review(id).revision == 3);
}

TEST_CASE("a carried finding survives a gate-absent revision and --retry-absent",
          "[service][review]") {
  ReviewHarness h([](config::Config& c) { c.review.round_max_attempts = 1; });
  int64_t id = Blocked(h);
  const std::string fixed = kBad + "+// fixed?\n";
  REQUIRE(h.Regate(id, Artifact(fixed)).ok());
  h.TimeOut();  // the reviewer hangs: gate-absent
  REQUIRE(h.Done(id));
  auto absent = h.Review(id);
  CHECK(absent.verdict == "gate-absent");
  CHECK_THAT(absent.findings, Catch::Contains("r0.openai.B1"));  // still on record
  CHECK(absent.gate_id != 0);
  // The same artifact again, as a retry of the absent gate: allowed, not a fix round.
  service::RegateInput retry = Artifact(fixed);
  retry.retry_absent = true;
  REQUIRE(h.Regate(id, retry).ok());
  CHECK(h.Review(id).fix_rounds == 1);
  auto* run = h.NextRun();
  REQUIRE(run);
  CHECK_THAT(h.Brief(run), Catch::Contains("r0.openai.B1"));
  h.Answer("[]");
  REQUIRE(h.Done(id));
  CHECK(h.Review(id).verdict == "BLOCKED");
  // The absent gate's decision gate was superseded by the retry.
  auto g = h.core->gates.Get(absent.gate_id);
  REQUIRE(g);
  CHECK(g->status == "resolved");
  CHECK(g->decision == "superseded");
}

TEST_CASE("past max_fix_rounds a re-gate escalates to the coordinator instead",
          "[service][review]") {
  ReviewHarness h;
  int64_t id = Blocked(h, 1);
  REQUIRE(h.Regate(id, Artifact(kBad + "+1\n")).ok());
  h.Answer("[" + Finding("r0.openai.B1", "BLOCKER", "still_present") + "]");
  REQUIRE(h.Done(id));
  const size_t escalations = h.Messages("escalation").size();
  auto past = h.Regate(id, Artifact(kBad + "+2\n"));
  REQUIRE_FALSE(past.ok());
  CHECK(past.status().code() == Code::kFailedPrecondition);
  CHECK_THAT(past.status().message(), Catch::Contains("fix-round limit (1)"));
  auto esc = h.Messages("escalation");
  REQUIRE(esc.size() == escalations + 1);
  CHECK_THAT(esc.back().subject, Catch::Contains("fix-round limit"));
  CHECK(h.Review(id).revision == 2);  // nothing ran
  CHECK(h.launcher.launches.size() == 2);
  // A person may allow another round explicitly.
  service::RegateInput more = Artifact(kBad + "+2\n");
  more.max_fix_rounds = 2;
  REQUIRE(h.Regate(id, more).ok());
  CHECK(h.Review(id).revision == 3);
  CHECK(h.Review(id).max_fix_rounds == 2);
}

TEST_CASE("the default fix-round limit comes from review.max_fix_rounds", "[service][review]") {
  ReviewHarness h([](config::Config& c) { c.review.max_fix_rounds = 0; });
  int64_t id = Blocked(h);
  CHECK(h.Review(id).max_fix_rounds == 0);
  auto r = h.Regate(id, Artifact(kBad + "+1\n"));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("fix-round limit (0)"));
}

TEST_CASE("strong needs a session, and the guard is one Strong per session", "[service][review]") {
  ReviewHarness h;
  service::StartReviewInput in;
  in.mode = "strong";
  auto none = h.Start(in);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == Code::kInvalidArgument);
  CHECK_THAT(none.status().message(), Catch::Contains("session") && Catch::Contains("CONCLAVE_SESSION"));
  in.session = "tab-1";
  auto first = h.Start(in);
  REQUIRE(first.ok());
  CHECK(first->review.blocked_by.empty());
  auto second = h.Start(in);
  REQUIRE(second.ok());
  CHECK(second->review.blocked_by == "strong_session_used");
  in.session = "tab-2";
  CHECK(h.Start(in)->review.blocked_by.empty());
}

TEST_CASE("measure mode runs the same-source and the foreign reviewer independently",
          "[service][review]") {
  ReviewHarness h;
  service::StartReviewInput in;
  in.measure = true;
  in.primary = "prim";
  in.challengers = {"chal"};
  auto v = h.Start(in);
  REQUIRE(v.ok());
  CHECK(v->review.mode == "debate");
  // Both run at once; neither brief shows the other's round.
  REQUIRE(h.RunUntil([&] { return h.launcher.Running().size() == 2; }));
  for (auto* l : h.launcher.Running()) CHECK(h.Brief(l).find("EARLIER ROUNDS") == std::string::npos);
  h.Answer("[" + Finding("P1", "MEDIUM", "new", "correctness") + "]");
  h.Answer("[" + Finding("C1", "MEDIUM", "new", "performance") + "]");
  REQUIRE(h.Done(v->review.id));
  auto r = h.Review(v->review.id);
  CHECK(r.measure);
  CHECK(r.termination == "parallel");
  std::optional<StatusOr<service::ReportView>> built;
  h.services->reviews.Report(0, [&](StatusOr<service::ReportView> r) { built = std::move(r); });
  REQUIRE(h.RunUntil([&] { return built.has_value(); }));
  REQUIRE(built->ok());
  auto report = (*built)->json;
  CHECK(report["incremental_value"]["measured"]["foreign_only"] == 1);
  CHECK(report["incremental_value"]["measured"]["same_source_only"] == 1);
  CHECK(report["debates"]["count"] == 0);
  // --measure is for a debate's primary and challenger only.
  in.mode = "simple";
  auto bad = h.Start(in);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("measure"));
}

}  // namespace
}  // namespace conclave
