// Spawning a worker: posix_spawn (glibc uses CLONE_VFORK, so the cost does not grow with the
// daemon's memory) into a new process group, with stdin/stdout/stderr on pipes, in a working
// directory, with an explicit environment. Every descriptor the daemon opens is O_CLOEXEC,
// so the child inherits only the three pipes. A pidfd lets the loop learn of the exit without
// SIGCHLD and without ever calling waitpid(-1).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace conclave::exec {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH from env when it has no '/'
  std::vector<std::string> env;   // "NAME=value"
  std::string cwd;
};

struct SpawnedChild {
  pid_t pid = -1;  // also the process group id
  int pidfd = -1;
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  int64_t start_time = 0;  // /proc/<pid>/stat field 22
};

// How the caller uses the daemon's ends of the pipes. kNonBlocking sets O_NONBLOCK on them;
// kAsio leaves that to asio, which sets it itself (FIONBIO) before its first read or write,
// so the three fcntl pairs per spawn would only be made twice.
enum class PipeMode { kNonBlocking, kAsio };

StatusOr<SpawnedChild> SpawnChild(const SpawnSpec& spec, PipeMode mode = PipeMode::kNonBlocking);

// Resolves a program name against PATH as given in env ("PATH=..."); returns "" if not found.
std::string FindOnPath(const std::string& program, const std::vector<std::string>& env);

}  // namespace conclave::exec
