#include "exec/worktree_check.h"

#include <chrono>
#include <filesystem>
#include <set>
#include <system_error>

namespace conclave::exec {
namespace fs = std::filesystem;
namespace {
constexpr size_t kMaxClaims = 200;
constexpr int kGitTimeoutMs = 10000;
// File systems stamp with a coarse clock: a write just after the start may look a little older.
constexpr int64_t kMtimeSlackMs = 1000;

// "./a//b" → "a/b"; "" when it is not a plain relative path inside the directory.
std::string Normal(const std::string& claim) {
  fs::path p = fs::path(claim).lexically_normal();
  std::string s = p.generic_string();
  if (s.empty() || s == "." || p.is_absolute() || s.rfind("..", 0) == 0) return "";
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::vector<std::string> Git(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-c", "core.quotepath=false", "-c",
                                   "diff.relative=false"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

// Pathspecs that name exactly these repository-relative paths (no globbing).
std::vector<std::string> Literal(const std::set<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(":(top,literal)" + p);
  return out;
}

int64_t MtimeMs(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return -1;
  auto sys = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
}

}  // namespace

std::vector<std::string> SplitGitZ(const std::string& out, bool porcelain) {
  std::vector<std::string> paths;
  size_t at = 0;
  while (at < out.size()) {
    size_t end = out.find('\0', at);
    if (end == std::string::npos) end = out.size();
    std::string entry = out.substr(at, end - at);
    at = end + 1;
    if (porcelain) {
      if (entry.size() < 4) continue;  // "XY path"
      entry.erase(0, 3);
    }
    if (!entry.empty()) paths.push_back(entry);
  }
  return paths;
}

std::vector<std::string> UnpersistedClaims(CommandRunner& runner, const ClaimBasis& basis,
                                           const std::vector<std::string>& files) {
  std::vector<std::string> problems;
  std::vector<std::pair<std::string, std::string>> checked;  // (as claimed, normalised)
  for (const auto& f : files) {
    std::string n = Normal(f);
    if (n.empty()) {
      problems.push_back(f + ": not a path inside the worktree");
    } else if (checked.size() < kMaxClaims) {
      checked.emplace_back(f, n);
    }
  }
  if (checked.empty()) return problems;
  // In a repository: where the cwd sits inside it ("sub/dir/" or "").
  CommandResult where = runner.Run(Git({"rev-parse", "--show-prefix"}), basis.cwd, 5000);
  if (where.exit_code != 0) {
    for (const auto& [f, n] : checked) {
      fs::path p = fs::path(basis.cwd) / n;
      std::error_code ec;
      if (!fs::exists(p, ec)) {
        problems.push_back(f + ": claimed as changed but does not exist");
      } else if (basis.started_ms > 0 && MtimeMs(p) < basis.started_ms - kMtimeSlackMs) {
        problems.push_back(f + ": claimed as changed but not modified since the dispatch started");
      }
    }
    return problems;
  }
  std::string prefix = where.out.substr(0, where.out.find('\n'));
  // Each claim as a repository path: relative to the cwd, or already relative to the root.
  std::set<std::string> candidates;
  for (const auto& [f, n] : checked) {
    candidates.insert(Normal(prefix + n));
    candidates.insert(n);
  }
  candidates.erase("");
  std::set<std::string> changed;
  auto collect = [&](std::vector<std::string> args, bool porcelain) {
    args.push_back("--");
    for (auto& p : Literal(candidates)) args.push_back(p);
    CommandResult r = runner.Run(Git(args), basis.cwd, kGitTimeoutMs);
    if (r.exit_code != 0) return false;
    for (auto& p : SplitGitZ(r.out, porcelain)) changed.insert(p);
    return true;
  };
  bool judged = false;
  if (!basis.start_head.empty()) {
    // Against the starting point: the working tree (covering commits since) and the index.
    judged = collect({"diff", "--name-only", "-z", "--no-renames", basis.start_head}, false) &&
             collect({"diff", "--cached", "--name-only", "-z", "--no-renames", basis.start_head},
                     false);
  }
  // New untracked files (and, with no starting point, anything changed against HEAD).
  bool listed = collect({"status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"},
                        true);
  if (!listed && !judged) {
    problems.push_back("git could not list the changes in " + basis.cwd);
    return problems;
  }
  for (const auto& [f, n] : checked) {
    if (changed.count(Normal(prefix + n)) || changed.count(n)) continue;
    std::error_code ec;
    bool exists = fs::exists(fs::path(basis.cwd) / n, ec);
    std::string against = basis.start_head.empty()
                              ? "git HEAD"
                              : "the dispatch's starting point " + basis.start_head.substr(0, 12);
    problems.push_back(f + (exists ? ": claimed as changed but identical to " + against
                                   : ": claimed as changed but does not exist"));
  }
  return problems;
}

}  // namespace conclave::exec
