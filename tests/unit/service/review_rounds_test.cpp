// Service-level tests of the review engine (service/review_rounds, review_round_launcher):
// round deadlines, bounded retries, the daemon's finding ids, family derivation at dispatch.
// Real SQLite, fake clock, fake launcher: no processes, no sleeps.
#include <catch2/catch.hpp>

#include "review_harness.h"

namespace conclave {
namespace {
using testing::Finding;
using testing::ReviewHarness;

service::StartReviewInput Simple(const std::string& reviewer = "chal") {
  service::StartReviewInput in;
  in.mode = "simple";
  in.primary = reviewer;
  return in;
}

TEST_CASE("a round's deadline is the lower of the profile's timeout_s and round_timeout_s",
          "[service][review]") {
  ReviewHarness h([](config::Config& c) { c.review.round_timeout_s = 900; });
  h.Profile("chal").timeout_s = 3;
  h.Profile("chal").idle_timeout_s = 300;  // its idle kill would be 900 s
  auto v = h.Start(Simple());
  REQUIRE(v.ok());
  auto* run = h.NextRun();
  REQUIRE(run);
  CHECK(run->limits.hard_timeout == std::chrono::seconds(3));
  auto d = h.Dispatches(v->rounds[0].task_id).front();
  CHECK(d.timeout_s == 3);
  CHECK(d.deadline_ms - d.started_ms == 3000);
  // The other way round: a slow profile is held to the review's cap.
  h.Profile("third").timeout_s = 1800;
  auto w = h.Start(Simple("third"));
  REQUIRE(w.ok());
  REQUIRE(h.RunUntil([&] { return h.launcher.launches.size() == 2; }));
  CHECK(h.launcher.launches[1].limits.hard_timeout == std::chrono::seconds(900));
}

TEST_CASE("a hung reviewer is retried at most round_max_attempts times, then gate-absent",
          "[service][review]") {
  ReviewHarness h([](config::Config& c) {
    c.retry.max_attempts = 4;  // what any other task would get
    c.review.round_max_attempts = 2;
  });
  auto v = h.Start(Simple());
  REQUIRE(v.ok());
  h.TimeOut();
  // One retry, after its backoff (base 1 s on the fake clock).
  bool retried = h.RunUntil([&] { return h.Dispatches(v->rounds[0].task_id).size() == 2; });
  for (const auto& x : h.Dispatches(v->rounds[0].task_id)) {
    UNSCOPED_INFO("dispatch " << x.id << " state " << int(x.state) << " kind " << x.failure_kind
                  << " class " << x.failure_class << " ev " << x.evidence << " target " << x.target);
  }
  UNSCOPED_INFO("task status " << int(h.Task(v->rounds[0].task_id).status));
  REQUIRE(retried);
  h.clock.Advance(2000);
  h.TimeOut();
  REQUIRE(h.Done(v->review.id));
  CHECK(h.launcher.launches.size() == 2);
  auto r = h.Review(v->review.id);
  CHECK(r.verdict == "gate-absent");
  CHECK_THAT(r.reason, Catch::Contains("timeout"));
}

TEST_CASE("the daemon names the findings: a challenger's F1 is not the primary's F1",
          "[service][review]") {
  ReviewHarness h;
  service::StartReviewInput in;
  in.mode = "debate";
  in.primary = "prim";
  in.challengers = {"chal"};
  in.cap = 1;
  auto v = h.Start(in);
  REQUIRE(v.ok());
  h.Answer("[" + Finding("F1", "MEDIUM", "new", "docs") + "]");
  // The challenger's brief shows the primary's finding under its full id.
  auto* challenger = h.NextRun();
  REQUIRE(challenger);
  CHECK_THAT(h.Brief(challenger), Catch::Contains("r0.anthropic.F1"));
  h.Answer("[" + Finding("F1", "BLOCKER", "agree") + "]");  // a bare id: its own finding
  h.Answer("[]");
  REQUIRE(h.Done(v->review.id));
  auto rounds = h.services->reviews.Get(v->review.id)->rounds;
  REQUIRE(rounds.size() == 3);
  CHECK_THAT(rounds[1].findings, Catch::Contains("\"r1.openai.F1\"") && Catch::Contains("\"new\""));
  auto r = h.Review(v->review.id);
  CHECK(r.verdict == "BLOCKED");  // the challenger's BLOCKER did not merge into a MEDIUM
  CHECK_THAT(r.findings, Catch::Contains("r0.anthropic.F1") && Catch::Contains("r1.openai.F1"));
}

TEST_CASE("a reviewer whose model is of the writer's family is refused at dispatch",
          "[service][review]") {
  ReviewHarness h;
  auto& oc = h.AddProfile("oc", "opencode", 2);  // a multi-vendor CLI...
  oc.type = "cli";
  oc.command = {"opencode", "run", "--model", "kimi-k3"};  // ...running Moonshot's kimi
  service::StartReviewInput in = Simple("oc");
  in.writer_family = "moonshot";
  auto refused = h.Start(in);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Code::kFailedPrecondition);
  CHECK_THAT(refused.status().message(), Catch::Contains("moonshot"));
  // For another writer it reviews, recorded as what it really is.
  in.writer_family = "anthropic";
  auto ok = h.Start(in);
  REQUIRE(ok.ok());
  REQUIRE(ok->rounds.size() == 1);
  CHECK(ok->rounds[0].family == "moonshot");
  CHECK(ok->rounds[0].model == "kimi-k3");
  // When the model changes under a running review, the next dispatch refuses it.
  oc.command = {"opencode", "run", "--model", "claude-sonnet-4-5"};
  h.Answer("[]");
  REQUIRE(h.Done(ok->review.id));
  service::RegateInput again;
  again.artifact = "diff --git a/a b/a\n+y\n";
  auto regated = h.Regate(ok->review.id, again);
  REQUIRE(regated.ok());
  REQUIRE(h.Done(ok->review.id));
  auto r = h.Review(ok->review.id);
  CHECK(r.verdict == "gate-absent");
  CHECK_THAT(r.reason, Catch::Contains("not foreign"));
}

TEST_CASE("parallel lines are recorded as parallel, never as a converged debate",
          "[service][review]") {
  ReviewHarness h;
  service::StartReviewInput in;
  in.mode = "strong";
  in.session = "s1";
  auto v = h.Start(in);
  REQUIRE(v.ok());
  h.Answer("[]");
  h.Answer("[]");
  REQUIRE(h.Done(v->review.id));
  CHECK(h.Review(v->review.id).termination == "parallel");
  CHECK(h.Review(v->review.id).verdict == "APPROVED");
}

}  // namespace
}  // namespace conclave
