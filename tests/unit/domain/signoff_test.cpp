// Human sign-off: only a human's accept-risk on a stalemate or gate-absent verdict approves.
#include <catch2/catch.hpp>

#include "domain/caller_identity.h"
#include "domain/signoff.h"

namespace conclave::domain {
namespace {

TEST_CASE("sign-off: accept-risk from a terminal approves by sign-off, nothing else does",
          "[review][signoff]") {
  CallerIdentity human{1000, 42, "/usr/local/bin/conclave", "/dev/pts/3", "peer"};
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

TEST_CASE("sign-off: who decided is the kernel's view of the caller when the daemon has one",
          "[review][signoff]") {
  Caller peer;
  peer.uid = 1000;
  peer.pid = 4321;
  peer.exe = "/usr/bin/conclave";
  peer.tty = "";  // a script: its stdin is no terminal
  CallerIdentity claimed{0, 1, "/bin/human", "/dev/pts/9", "client"};
  // A unix-socket caller: what it claims is ignored — it cannot make itself a human.
  auto seen = IdentityOf(peer, claimed);
  CHECK(seen.source == "peer");
  CHECK(seen.pid == 4321);
  CHECK(seen.uid == 1000);
  CHECK(seen.exe == "/usr/bin/conclave");
  CHECK(seen.tty.empty());
  CHECK_FALSE(seen.FromTerminal());
  CHECK_FALSE(DecideSignoff("gate-absent", "accept-risk", seen).human);
  peer.tty = "/dev/pts/2";
  CHECK(IdentityOf(peer, claimed).FromTerminal());
  // A loopback TCP caller (no pid): its claim is recorded as a claim, never as a human.
  Caller tcp;
  auto stated = IdentityOf(tcp, claimed);
  CHECK(stated.source == "client");
  CHECK(stated.tty == "/dev/pts/9");
  CHECK_FALSE(stated.FromTerminal());
  CHECK(DecideSignoff("gate-absent", "accept-risk", stated).verdict == "gate-absent");
}

}  // namespace
}  // namespace conclave::domain
