// CommandRunner: runs a short helper command (git, a CLI's --version) to completion and
// returns its exit code and standard output — the seam through which the daemon's helper
// commands run, so tests can script them. Blocking: call it off the loop thread (the
// daemon's helper pool). ProcessCommandRunner is the real one (exec/child_process, own process
// group, killed at the timeout).
// Thread-safety: Run may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace conclave::exec {

struct CommandResult {
  // -1: could not start, killed by a signal, or timed out; 127: the program is not installed.
  int exit_code = -1;
  bool timed_out = false;
  std::string out;  // stdout, at most 1 MiB
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd,
                            int timeout_ms) = 0;
  // The same with `input` written to the command's stdin (then closed).
  virtual CommandResult RunWithInput(const std::vector<std::string>& argv, const std::string& cwd,
                                     const std::string& input, int timeout_ms) {
    (void)input;
    return Run(argv, cwd, timeout_ms);
  }
};

// A git command line as the daemon runs it in a repository a worker could write: nullopt (and
// an error logged) when `dir` (or -C's) holds a planted commondir redirect; otherwise argv
// with nothing a repository's files name run — no file-system monitor, no hooks, no bare
// repository found in a worker's directory, no descent into submodules. Other commands are
// returned unchanged.
std::optional<std::vector<std::string>> GuardedGitArgv(const std::vector<std::string>& argv,
                                                       const std::string& cwd);

class ProcessCommandRunner final : public CommandRunner {
 public:
  CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd,
                    int timeout_ms) override;
  CommandResult RunWithInput(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::string& input, int timeout_ms) override;
};

}  // namespace conclave::exec
