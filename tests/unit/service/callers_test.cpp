// Unit tests: who a unix-socket caller is (service/callers over exec/proc_info) — a caller is
// the coordinator only when its whole parent chain was read and the daemon is not on it; a
// chain that could not be read to the end (a link gone, unreadable, or too deep to walk) is
// taken for a worker's process bound to no dispatch.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "exec/proc_info.h"
#include "service_harness.h"

namespace conclave {
namespace {

TEST_CASE("an ancestry walk says whether it reached the top", "[service][callers]") {
  // This process, up to init: not below the (absent) ancestor, and known not to be.
  exec::Ancestry mine = exec::ReadAncestry(getpid(), 0x3fffffff);
  CHECK_FALSE(mine.descends);
  CHECK(mine.complete);
  CHECK(exec::ReadAncestry(getpid(), getppid()).descends);
  // A process that is gone: nothing is known.
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  REQUIRE(gone > 0);
  int st = 0;
  REQUIRE(waitpid(gone, &st, 0) == gone);
  exec::Ancestry none = exec::ReadAncestry(gone, getpid());
  CHECK_FALSE(none.descends);
  CHECK_FALSE(none.complete);
}

TEST_CASE("a caller whose ancestry is not known in full is never the coordinator",
          "[service][callers]") {
  testing::ServiceHarness h;
  service::PeerInfo peer;
  peer.uid = static_cast<uint32_t>(geteuid());
  peer.pid = 4242;
  peer.ancestry.descends = false;
  peer.ancestry.complete = true;
  CHECK(h.services->callers.Resolve(peer).role == domain::CallerRole::kCoordinator);
  peer.ancestry.complete = false;  // a chain deeper than the walk, or a link gone mid-walk
  auto c = h.services->callers.Resolve(peer);
  CHECK(c.role == domain::CallerRole::kUnboundWorker);
  CHECK(c.dispatch_id == 0);
}

}  // namespace
}  // namespace conclave
