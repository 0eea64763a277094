// InChild: runs fn in a forked child and says whether it returned. A call that would block
// forever (a FIFO opened for reading) or read without end (a device) is a failed check, not a
// hung test binary: the child has a watchdog alarm (a failure bound only; a passing call
// returns long before it) and a 1 GiB address-space limit (not under AddressSanitizer, whose
// shadow memory needs far more address space).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#if defined(__SANITIZE_ADDRESS__)
#define CONCLAVE_IN_CHILD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONCLAVE_IN_CHILD_ASAN 1
#endif
#endif

namespace conclave::testing {

// True when fn returned true in the child and the child exited normally.
inline bool InChild(const std::function<bool()>& fn, unsigned watchdog_s = 20) {
  pid_t pid = fork();
  if (pid == 0) {
    // The watchdog's signal ends the child whatever the parent had set up for it.
    signal(SIGALRM, SIG_DFL);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alrm, nullptr);
    alarm(watchdog_s);
#ifndef CONCLAVE_IN_CHILD_ASAN
    struct rlimit as {1ul << 30, 1ul << 30};
    setrlimit(RLIMIT_AS, &as);
#endif
    bool ok = false;
    try {
      ok = fn();
    } catch (...) {
    }
    _exit(ok ? 0 : 1);
  }
  int st = 0;
  if (pid < 0) return false;
  pid_t r;
  while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
  }
  if (r != pid) return false;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

}  // namespace conclave::testing
