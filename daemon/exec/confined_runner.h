// ConfinedRunner: runs the daemon's helper commands (git) for a sandboxed terminal inside a
// read-only bubblewrap sandbox with no network (SandboxPaths::read_only: the daemon's state,
// socket, config and runtime directories hidden as for the worker). Whatever a worker planted
// for git to run — a filter or textconv in a repository's config, a config.worktree, a
// ~/.gitconfig under a writable cwd, a repository made where git looks first — then runs with
// less than the worker had, not with the daemon's rights. Commands are guarded as
// ProcessCommandRunner guards them (GuardedGitArgv), then wrapped and handed to `inner`.
// When the sandbox cannot be set up every command fails (exit -1): callers judge as when git
// could not run.
// Thread-safety: as `inner`; the sandbox paths are resolved once, on the first command.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/command_runner.h"
#include "exec/sandbox.h"

namespace conclave::exec {

class ConfinedRunner final : public CommandRunner {
 public:
  ConfinedRunner(CommandRunner& inner, SandboxPaths paths);
  CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd,
                    int timeout_ms) override;
  CommandResult RunWithInput(const std::vector<std::string>& argv, const std::string& cwd,
                             const std::string& input, int timeout_ms) override;

 private:
  CommandRunner& inner_;
  SandboxPaths paths_;
  std::mutex mu_;
  bool resolved_ = false;
  bool usable_ = false;
};

// fn(runner): with `inner` itself, or with a ConfinedRunner over it when `sandbox` is set (a
// sandboxed terminal's).
template <typename Fn>
auto WithHelperRunner(CommandRunner& inner, const std::optional<SandboxPaths>& sandbox, Fn&& fn) {
  if (!sandbox) return fn(inner);
  ConfinedRunner confined(inner, *sandbox);
  return fn(confined);
}

}  // namespace conclave::exec
