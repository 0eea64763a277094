// VforkExec: starts a child the way glibc's posix_spawn does — a clone sharing the caller's
// memory (CLONE_VM) that pauses the caller until the child has called execve or died
// (CLONE_VFORK), so nothing is copied however big the daemon grows — but on a stack the
// calling thread keeps for all its spawns. posix_spawn maps a fresh stack for every child and
// unmaps it afterwards; in a multi-threaded daemon each unmap flushes the TLBs of the other
// CPUs the daemon runs on (an inter-processor interrupt, a VM exit on a virtual machine), and
// each fresh stack page faults in zeroed (README, Performance, has the figures).
//
// The child does what the daemon's posix_spawn call asked of glibc, in glibc's order:
//   1. every signal's disposition back to the default (the daemon's handlers must not run in
//      a child that shares its memory, and what the daemon ignores the worker must not;
//      glibc's two internal signals too, which glibc's child left ignored);
//   2. SCHED_OTHER when asked (a helper thread's SCHED_BATCH is the daemon's own);
//   3. its own process group (setpgid(0, 0));
//   4. the three descriptors onto 0, 1 and 2, every other descriptor closed;
//   5. the working directory;
//   6. at least nice_floor (not in glibc's: posix_spawn has no such attribute);
//   7. an empty signal mask (the caller blocks every signal around the clone);
//   8. execve.
// Everything in the child is a raw system call: no allocation, no lock, no errno of its own
// (errno is the paused caller's), no interceptor of AddressSanitizer's (ThreadSanitizer, which
// intercepts clone itself, is refused at compile time). A step that
// fails records its errno and the step's name where the caller reads them, and the child
// exits 127; the caller reaps it.
// Thread-safety: any thread may spawn; each has its own stack, kept until the thread ends.
#pragma once

#include <sys/types.h>

namespace conclave::exec {

struct ExecRequest {
  const char* path = nullptr;  // the program, already resolved (FindOnPath)
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdio[3] = {-1, -1, -1};  // become the child's 0, 1 and 2; -1 leaves the caller's there
  const char* cwd = nullptr;    // nullptr or "": the caller's
  bool sched_other = false;     // switch to SCHED_OTHER first
  // Above the caller's nice (what the child starts with): the child's nice, at most 19. At or
  // below it: the caller's (a process may not raise its priority without privilege). -20, the
  // default: no system call for it.
  int nice_floor = -20;
  // Non-null: the kernel writes the child's pid here before the child runs
  // (CLONE_PARENT_SETTID), so another thread can know it before the clone returns; set back
  // to -pid while a child whose exec failed is reaped, and to 0 once it is.
  pid_t* parent_tid = nullptr;
};

struct ExecResult {
  pid_t pid = -1;         // > 0: the child runs the program
  int error = 0;          // otherwise the errno of the step that failed
  const char* step = "";  // "clone", "setpgid", "sched", "dup", "chdir", "execve", ...
};

ExecResult VforkExec(const ExecRequest& req);

}  // namespace conclave::exec
