// Spawning a worker: a CLONE_VM|CLONE_VFORK child as glibc's posix_spawn makes one (so the cost
// does not grow with the daemon's memory) on a stack the thread keeps (exec/vfork_exec), into a new
// process group, with stdin/stdout/stderr on pipes (stdin on /dev/null when nothing will be written
// to it), in a working directory, with an explicit environment. The child closes every descriptor
// above 2, so it inherits only its three. A pidfd lets the loop learn of the exit without SIGCHLD
// and without ever calling waitpid(-1).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <vector>

#include "common/status.h"

namespace conclave::exec {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH from env when it has no '/'
  std::vector<std::string> env;   // "NAME=value"
  std::string cwd;
  bool stdin_null = false;  // stdin is /dev/null and SpawnedChild::stdin_fd -1: nothing to write
  // Non-null: set to the child's pid before the child runs (before SpawnChild returns), for a
  // thread that must recognise the child while another thread is still spawning it.
  std::atomic<pid_t>* early_pid = nullptr;
  // Keep the daemon's own copies of the stdout and stderr write ends (SpawnedChild's
  // stdout_hold, stderr_hold) for a caller that learns of the exit from the pidfd: the pipes
  // then reach EOF when it closes them after the exit, not as the worker closes its ends on the
  // way out, so one wake-up of the loop sees the exit and the end of the output together.
  bool hold_output_ends = false;
};

struct SpawnedChild {
  pid_t pid = -1;  // also the process group id
  int pidfd = -1;
  int stdin_fd = -1;  // -1 with SpawnSpec::stdin_null
  int stdout_fd = -1;
  int stderr_fd = -1;
  int stdout_hold = -1;  // write ends kept with SpawnSpec::hold_output_ends, else -1
  int stderr_hold = -1;
  int64_t start_time = 0;  // /proc/<pid>/stat field 22
};

// How the caller uses the daemon's ends of the pipes. kNonBlocking sets O_NONBLOCK on them;
// kAsio leaves that to asio, which sets it itself (FIONBIO) before its first read or write,
// so the three fcntl pairs per spawn would only be made twice.
enum class PipeMode { kNonBlocking, kAsio };

StatusOr<SpawnedChild> SpawnChild(const SpawnSpec& spec, PipeMode mode = PipeMode::kNonBlocking);

// Every child SpawnChild starts after this call runs `increment` nicer than the calling thread
// was at the call (conclaved's main thread, at start: the daemon's nice), at most nice 19, or
// as nice as the thread that spawns it where that one is nicer still: workers, their
// commands and the daemon's own commands (git, verify commands, notifiers) yield the CPU to the
// daemon's loop and API threads when the machine is busy — and so to every other process left at
// the daemon's nice. The log writer and the helper pool, which do CPU work off the loop, run as
// nice as the children (NiceThisThreadAsChildren), so what they spawn runs as nice as any child,
// no nicer; the daemon's other threads keep its nice. A child that starts a session of its own
// (a sandboxed worker: bwrap --new-session, or one calling setsid) is, where the kernel groups
// tasks by session (sched_autogroup_enabled, outside a cgroup with the cpu controller), weighed
// against the daemon's session as a group, where its nice no longer counts. Set once by
// conclaved's main from the config's child_nice (default 10); 0 (children keep their spawner's
// nice) until then.
void SetChildNice(int increment);
// The nice every child runs at least at: SetChildNice's caller's plus its increment, at most 19;
// kKeepNice while the increment is 0 (a child keeps its spawner's nice).
inline constexpr int kKeepNice = -20;
int ChildNiceFloor();
// Makes the calling thread as nice as ChildNiceFloor() when it is less nice (best effort; a
// thread may always lower its own priority).
void NiceThisThreadAsChildren();

// Resolves a program name against PATH as given in env ("PATH=..."); returns "" if not found.
std::string FindOnPath(const std::string& program, const std::vector<std::string>& env);

}  // namespace conclave::exec
