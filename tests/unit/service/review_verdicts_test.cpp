// Service-level tests of sign-off (service/review_verdicts): resolving a review's stalemate or
// gate-absent decision gate records who decided; only a human's accept-risk approves.
#include <catch2/catch.hpp>

#include "review_harness.h"

namespace conclave {
namespace {
using testing::ReviewHarness;

// A simple review whose reviewer crashed: gate-absent, with a decision gate.
domain::Review Absent(ReviewHarness& h) {
  service::StartReviewInput in;
  in.mode = "simple";
  in.primary = "chal";
  auto v = h.Start(in);
  REQUIRE(v.ok());
  auto* l = h.NextRun();
  REQUIRE(l);
  h.launcher.Finish(l, "", 2, "reviewer crashed");
  REQUIRE(h.Done(v->review.id));
  auto r = h.Review(v->review.id);
  REQUIRE(r.verdict == "gate-absent");
  REQUIRE(r.gate_id != 0);
  return r;
}

StatusOr<domain::Gate> Resolve(ReviewHarness& h, int64_t gate, const std::string& decision,
                               const domain::CallerIdentity& caller) {
  std::optional<StatusOr<domain::Gate>> out;
  h.services->gates.Resolve(gate, decision, caller, "checked by hand",
                            [&](StatusOr<domain::Gate> g) { out = std::move(g); });
  h.RunUntil([&] { return out.has_value(); });
  return out.value_or(Internal("no answer"));
}

TEST_CASE("a human's accept-risk on a gate-absent review: APPROVED_BY_SIGNOFF, recorded",
          "[service][review][signoff]") {
  ReviewHarness h;
  auto r = Absent(h);
  domain::CallerIdentity human{1000, 4242, "/usr/local/bin/conclave", "/dev/pts/7", "peer"};
  REQUIRE(Resolve(h, r.gate_id, "accept-risk", human).ok());
  auto after = h.Review(r.id);
  CHECK(after.verdict == "APPROVED_BY_SIGNOFF");
  auto signoffs = h.services->reviews.Get(r.id)->signoffs;
  REQUIRE(signoffs.size() == 1);
  CHECK(signoffs[0].human);
  CHECK(signoffs[0].caller.pid == 4242);
  CHECK(signoffs[0].caller.uid == 1000);
  CHECK(signoffs[0].caller.exe == "/usr/local/bin/conclave");
  CHECK(signoffs[0].caller.tty == "/dev/pts/7");
  CHECK(signoffs[0].decision == "accept-risk");
  CHECK(signoffs[0].reason == "checked by hand");
  CHECK(signoffs[0].verdict_before == "gate-absent");
  CHECK(signoffs[0].verdict_after == "APPROVED_BY_SIGNOFF");
  CHECK(signoffs[0].created_ms > 0);
}

TEST_CASE("accept-risk without a terminal, or another decision, leaves the review blocked",
          "[service][review][signoff]") {
  ReviewHarness h;
  auto r = Absent(h);
  domain::CallerIdentity script{1000, 77, "/usr/local/bin/conclave", "", "client"};
  REQUIRE(Resolve(h, r.gate_id, "accept-risk", script).ok());
  CHECK(h.Review(r.id).verdict == "gate-absent");
  auto signoffs = h.services->reviews.Get(r.id)->signoffs;
  REQUIRE(signoffs.size() == 1);
  CHECK_FALSE(signoffs[0].human);
  CHECK(signoffs[0].verdict_after == "gate-absent");
  // The gate is resolved now: it cannot be resolved again into an approval.
  domain::CallerIdentity human{1000, 78, "/bin/conclave", "/dev/pts/1", "peer"};
  CHECK_FALSE(Resolve(h, r.gate_id, "accept-risk", human).ok());
  CHECK(h.Review(r.id).verdict == "gate-absent");

  auto r2 = Absent(h);
  REQUIRE(Resolve(h, r2.gate_id, "reject", human).ok());
  CHECK(h.Review(r2.id).verdict == "gate-absent");
  CHECK(h.services->reviews.Get(r2.id)->signoffs.size() == 1);
}

}  // namespace
}  // namespace conclave
