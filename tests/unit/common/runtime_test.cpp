// ProductionRuntime: abseil's debug-only deadlock detection is off, so gRPC's mutexes cost
// what they cost in a release build. Each case runs in a child process: with detection on, a
// lock-order inversion aborts the process.
#include "common/runtime.h"

#include <absl/synchronization/mutex.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <catch2/catch.hpp>

namespace {

// Locks two mutexes in one order, then in the other (never deadlocking: one thread), in a
// child; true when the child exited normally.
bool InvertedLockOrderSurvives(bool production) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // An abort here is the expected outcome of one case: no core file, no report from the
    // test framework's signal handler, no abseil message in the test's output.
    signal(SIGABRT, SIG_DFL);
    struct rlimit no_core {};
    setrlimit(RLIMIT_CORE, &no_core);
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, 1), dup2(null_fd, 2);
    if (production) conclave::ProductionRuntime();
    absl::Mutex a, b;
    a.Lock(), b.Lock(), b.Unlock(), a.Unlock();
    b.Lock(), a.Lock(), a.Unlock(), b.Unlock();
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("the production runtime runs without abseil's debug-only deadlock detection") {
  // Debian's abseil is built without NDEBUG: left on, detection aborts on the inversion (this
  // is what makes the second check able to fail).
  CHECK_FALSE(InvertedLockOrderSurvives(false));
  CHECK(InvertedLockOrderSurvives(true));
}
