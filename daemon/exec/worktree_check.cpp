#include "exec/worktree_check.h"

#include <chrono>
#include <filesystem>
#include <set>
#include <system_error>

#include "common/hash.h"
#include "common/read_file.h"

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
  // --no-optional-locks: status would otherwise take index.lock while a worker runs git.
  std::vector<std::string> argv = {"git", "--no-optional-locks", "-c", "core.quotepath=false",
                                   "-c", "diff.relative=false"};
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

constexpr size_t kMaxDirtyFiles = 1000;
constexpr uintmax_t kMaxHashedBytes = 16u << 20;
constexpr uintmax_t kMaxSnapshotBytes = 64u << 20;  // in all: the completion waits for it

// The file's state now: exists, content hash (when small enough), mtime.
DirtyFile ReadState(const fs::path& p) {
  DirtyFile f;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    f.exists = fs::exists(p, ec);
    return f;
  }
  f.exists = true;
  f.mtime_ms = MtimeMs(p);
  if (fs::file_size(p, ec) > kMaxHashedBytes || ec) return f;
  // Read as a regular file only: swapped for a FIFO since the check above, it would stall this
  // helper thread.
  std::string content;
  if (!ReadRegularFile(p.c_str(), &content, kMaxHashedBytes)) return f;
  // Written while it was read: the content may not be what the mtime says. Not hashed.
  if (MtimeMs(p) != f.mtime_ms) return f;
  f.sha256 = Sha256Hex(content);
  return f;
}

}  // namespace

DirtyFiles SnapshotDirty(CommandRunner& runner, const std::string& cwd) {
  DirtyFiles out;
  CommandResult top = runner.Run(Git({"rev-parse", "--show-toplevel"}), cwd, 5000);
  if (top.exit_code != 0) return out;
  std::string root = top.out.substr(0, top.out.find('\n'));
  CommandResult r = runner.Run(Git({"status", "--porcelain=v1", "-z", "--untracked-files=all",
                                    "--no-renames"}),
                               cwd, kGitTimeoutMs);
  if (r.exit_code != 0) return out;
  uintmax_t hashed = 0;
  for (const auto& path : SplitGitZ(r.out, true)) {
    if (out.size() >= kMaxDirtyFiles || hashed > kMaxSnapshotBytes) break;
    std::error_code ec;
    uintmax_t size = fs::file_size(fs::path(root) / path, ec);
    if (!ec) hashed += size;
    DirtyFile f = ReadState(fs::path(root) / path);
    // Gone (deleted before the start, or by the worker before this read: it cannot be told)
    // or not hashed: judged as before.
    if (!f.exists || f.sha256.empty()) continue;
    out[path] = f;
  }
  return out;
}

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
  // Git could not run (refused, timed out, its sandbox failed) — anything but "not a
  // repository" (128) or no git installed (127) — or the repository the dispatch started in is
  // no longer found: judging by file times instead would let a touched file pass, so every
  // claim fails.
  bool no_repo = where.exit_code == 128 || where.exit_code == 127;
  if (where.exit_code != 0 && (!no_repo || !basis.start_head.empty())) {
    for (const auto& [f, n] : checked) {
      problems.push_back(f + ": cannot be checked: git could not read the repository in " +
                         basis.cwd);
    }
    return problems;
  }
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
  // Committed since the start: work, even when the content equals an earlier dirty state.
  std::set<std::string> committed;
  if (!basis.start_head.empty() && basis.dirty_at_start && !basis.dirty_at_start->empty()) {
    std::vector<std::string> args = {"diff", "--name-only", "-z", "--no-renames",
                                     basis.start_head, "HEAD", "--"};
    for (auto& p : Literal(candidates)) args.push_back(p);
    CommandResult r = runner.Run(Git(args), basis.cwd, kGitTimeoutMs);
    for (auto& p : SplitGitZ(r.out, false)) committed.insert(p);
    if (r.exit_code != 0) committed.insert(candidates.begin(), candidates.end());  // unknown
  }
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
  // A claim that names a file already dirty at the start holds only if the file changed since.
  auto untouched = [&](const std::string& repo_path) {
    if (!basis.dirty_at_start || committed.count(repo_path)) return false;
    auto it = basis.dirty_at_start->find(repo_path);
    if (it == basis.dirty_at_start->end()) return false;
    const DirtyFile& then = it->second;
    if (then.mtime_ms < 0 || then.mtime_ms >= basis.started_ms - kMtimeSlackMs) {
      return false;  // read after the start: it may hold the dispatch's own change
    }
    std::string up;  // from the cwd back to the repository root
    for (char c : prefix) up += c == '/' ? "../" : "";
    DirtyFile now = ReadState(fs::path(basis.cwd) / up / repo_path);
    return now.exists == then.exists && now.sha256 == then.sha256;
  };
  for (const auto& [f, n] : checked) {
    std::string as_repo = Normal(prefix + n);
    bool in_changed = changed.count(as_repo) || changed.count(n);
    if (in_changed && !(untouched(changed.count(as_repo) ? as_repo : n))) continue;
    if (in_changed) {
      problems.push_back(f + ": claimed as changed but it is exactly as it was when the dispatch "
                             "started (it was already modified then)");
      continue;
    }
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
