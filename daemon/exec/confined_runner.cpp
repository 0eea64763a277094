#include "exec/confined_runner.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace conclave::exec {

ConfinedRunner::ConfinedRunner(CommandRunner& inner, SandboxPaths paths)
    : inner_(inner), paths_(std::move(paths)) {
  paths_.read_only = true;
  paths_.socket_source.clear();
}

CommandResult ConfinedRunner::Run(const std::vector<std::string>& argv, const std::string& cwd,
                                  int timeout_ms) {
  return RunWithInput(argv, cwd, "", timeout_ms);
}

CommandResult ConfinedRunner::RunWithInput(const std::vector<std::string>& argv,
                                           const std::string& cwd, const std::string& input,
                                           int timeout_ms) {
  SandboxPaths paths;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!resolved_) {
      resolved_ = true;
      Status s = ResolveSandboxPaths(paths_);
      usable_ = s.ok();
      if (!usable_) spdlog::error("not running helper commands: {}", s.message());
    }
    if (!usable_) return CommandResult{};
    paths = paths_;
  }
  auto guarded = GuardedGitArgv(argv, cwd);
  if (!guarded) return CommandResult{};
  return inner_.RunWithInput(BwrapArgv(paths, *guarded), cwd, input, timeout_ms);
}

}  // namespace conclave::exec
