// Human sign-off: only a human's accept-risk on a stalemate or gate-absent verdict approves.
#include <catch2/catch.hpp>

#include "domain/signoff.h"

namespace conclave::domain {
namespace {

TEST_CASE("sign-off: accept-risk from a terminal approves by sign-off, nothing else does",
          "[review][signoff]") {
  CallerIdentity human{1000, 42, "/usr/local/bin/conclave", "/dev/pts/3", "client"};
  CallerIdentity script{1000, 43, "/usr/local/bin/conclave", "", "client"};
  auto ok = DecideSignoff("adversarial-stalemate", "accept-risk", human);
  CHECK(ok.verdict == "APPROVED_BY_SIGNOFF");
  CHECK(ok.human);
  CHECK(DecideSignoff("gate-absent", "accept-risk", human).verdict == "APPROVED_BY_SIGNOFF");
  auto not_human = DecideSignoff("gate-absent", "accept-risk", script);
  CHECK(not_human.verdict == "gate-absent");
  CHECK_FALSE(not_human.human);
  CHECK_THAT(not_human.note, Catch::Contains("not a human sign-off"));
  CHECK(DecideSignoff("adversarial-stalemate", "fix", human).verdict == "adversarial-stalemate");
  CHECK(DecideSignoff("gate-absent", "reject", human).verdict == "gate-absent");
  auto blocked = DecideSignoff("BLOCKED", "accept-risk", human);
  CHECK(blocked.verdict == "BLOCKED");  // a foreign BLOCKER is never signed away
  CHECK_FALSE(blocked.applies);
}

}  // namespace
}  // namespace conclave::domain
