#include "exec/confined_runner.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <utility>

#include "exec/child_process.h"

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
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  if (!argv.empty() && FindOnPath(argv[0], {"PATH=" + path}).empty()) {
    CommandResult missing;
    missing.exit_code = 127;  // as a shell says it: not installed
    return missing;
  }
  auto guarded = GuardedGitArgv(argv, cwd);
  if (!guarded) return CommandResult{};
  // bwrap starts with none of the daemon's environment (its token, the vendors' keys):
  // --clearenv would not do, its pid 1 keeps the environment it was started with in
  // /proc/1/environ, where a planted filter reads it.
  std::vector<std::string> wrapped = {"env", "-i", "PATH=" + path};
  if (!paths.home.empty()) wrapped.push_back("HOME=" + paths.home);
  for (auto& a : BwrapArgv(paths, *guarded)) wrapped.push_back(std::move(a));
  return inner_.RunWithInput(wrapped, cwd, input, timeout_ms);
}

}  // namespace conclave::exec
