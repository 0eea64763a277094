#include "exec/confined_runner.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <string_view>
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
  // Only the absolute entries of the daemon's PATH: an empty or relative one would find a
  // program the worker left in its directory (where the command starts).
  const char* path_env = std::getenv("PATH");
  std::string path;
  std::string_view rest = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    if (!dir.empty() && dir[0] == '/') path += (path.empty() ? "" : ":") + std::string(dir);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  if (!argv.empty() && FindOnPath(argv[0], {"PATH=" + path}).empty()) {
    CommandResult missing;
    missing.exit_code = 127;  // as a shell says it: not installed
    return missing;
  }
  std::string bwrap = FindOnPath("bwrap", {"PATH=" + path});
  if (bwrap.empty()) return CommandResult{};  // cannot be confined: it does not run
  auto guarded = GuardedGitArgv(argv, cwd);
  if (!guarded) return CommandResult{};
  // bwrap starts with none of the daemon's environment (its token, the vendors' keys):
  // --clearenv would not do, its pid 1 keeps the environment it was started with in
  // /proc/1/environ, where a planted filter reads it.
  std::vector<std::string> wrapped = {"/usr/bin/env", "-i", "PATH=" + path};
  if (!paths.home.empty()) wrapped.push_back("HOME=" + paths.home);
  auto sandboxed = BwrapArgv(paths, *guarded);
  sandboxed[0] = bwrap;
  for (auto& a : sandboxed) wrapped.push_back(std::move(a));
  CommandResult r = inner_.RunWithInput(wrapped, cwd, input, timeout_ms);
  // The program was found above: a 127 now is env's or bwrap's failing, not "not installed".
  if (r.exit_code == 127) r.exit_code = -1;
  return r;
}

}  // namespace conclave::exec
