#include "exec/sandbox.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "common/read_file.h"
#include "exec/git_head.h"

namespace conclave::exec {
namespace fs = std::filesystem;
namespace {

// In apply order at equal depth: hide first, then make writable, then read-only on top.
enum class Kind { kHideDir, kHideFile, kBind, kBindTry, kReadOnlyTry };

struct Mount {
  Kind kind;
  std::string path;
  std::string source = "";  // bound from here when set (else from path)
};

size_t Depth(const std::string& path) {
  return static_cast<size_t>(std::count(path.begin(), path.end(), '/')) - (path == "/" ? 1 : 0);
}

// path is dir or below it.
bool IsUnder(const std::string& path, const std::string& dir) {
  if (dir.empty() || path.empty()) return false;
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string Parent(const std::string& path) {
  std::string p = fs::path(path).parent_path().string();
  return p.empty() ? "/" : p;
}

// Hiding "/" or a directory holding the worker's HOME would hide everything it runs on.
bool MayHide(const std::string& dir, const SandboxPaths& p) {
  return !dir.empty() && dir != "/" && !IsUnder(p.home, dir);
}

// "" when unreadable, a link or not a regular file (a worker's FIFO or device never stalls the
// launch, a link never points the daemon at a file hidden from the worker).
std::string FirstLineOf(const fs::path& file) {
  std::string line;
  return ReadFirstLine(file.c_str(), &line, 4096, O_NOFOLLOW) ? line : std::string();
}

std::string Canonical(const std::string& path) {
  std::error_code ec;
  if (path.empty()) return "";
  auto c = fs::canonical(path, ec);
  return ec ? "" : c.string();
}

// What the sandbox hides because it holds the daemon's secrets or a way out: the state
// directory, the config file's directory (or the file alone) and the runtime directories.
std::vector<std::string> SecretPaths(const SandboxPaths& p) {
  std::vector<std::string> out;
  if (!p.state_dir.empty()) out.push_back(p.state_dir);
  for (const auto& d : p.runtime_dirs) {
    if (MayHide(d, p) && !IsUnder(p.cwd, d)) out.push_back(d);
  }
  if (!p.config_file.empty()) {
    std::string dir = Parent(p.config_file);
    out.push_back(MayHide(dir, p) ? dir : p.config_file);
  }
  return out;
}

// A path a git file names: absolute, or relative to the git dir that holds the file.
std::string NamedIn(const std::string& git_dir, const std::string& named) {
  if (named.empty()) return "";
  fs::path n(named);
  return Canonical((n.is_absolute() ? n : fs::path(git_dir) / n).string());
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// core.worktree in a git dir's config (a submodule's points at its checkout), "" when unset:
// the last value, as git takes it, in the form git writes (a path in quotes when it holds a
// '#' or ';'). Anything this does not read ends in a refusal, never in a wrong yes.
std::string CoreWorktree(const std::string& git_dir) {
  std::string text;  // a config past 1 MiB is not one git wrote for a submodule: refused
  if (!ReadRegularFile((fs::path(git_dir) / "config").c_str(), &text, (1 << 20) + 1,
                       O_NOFOLLOW) ||
      text.size() > (1 << 20)) {
    return "";
  }
  std::istringstream in(text);
  std::string line, section, found;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line.erase(0, b);
    if (line[0] == '[') {
      section = Lower(line.substr(1, line.find(']') - 1));
      continue;
    }
    size_t eq = line.find('=');
    if (section != "core" || eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    key.erase(key.find_last_not_of(" \t") + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (Lower(key) == "worktree") found = value;
  }
  return found;
}

// Why the git directories found from the cwd may not be bound writable ("" when they may).
// The .git a worker can write (at its cwd, or below another terminal's top) may name any
// directory: only what git itself made for this directory is taken — a linked worktree's git
// dir whose gitdir file points back at this .git, a submodule's whose core.worktree points
// back at this directory, or a git dir in the worker's own directory — and never anything
// the sandbox hides.
std::string UntrustedGitDirs(const SandboxPaths& p) {
  const GitDirs& g = p.git;
  if (!g.refused.empty()) return g.refused;
  for (const std::string* path : {&g.git_dir, &g.common_dir, &g.dot_git}) {
    for (const auto& hidden : SecretPaths(p)) {
      if (!IsUnder(*path, hidden) || IsUnder(*path, p.dispatch_dir) ||
          (IsUnder(p.cwd, hidden) && IsUnder(*path, p.cwd))) {
        continue;
      }
      return "the git directory " + *path + " is inside " + hidden + ", which is hidden";
    }
  }
  if (g.git_dir.empty() || g.dot_git == g.git_dir) return "";  // none, or a .git directory
  auto own = [&](const std::string& dir) { return IsUnder(dir, p.cwd); };
  bool linked = NamedIn(g.git_dir, FirstLineOf(fs::path(g.git_dir) / "gitdir")) == g.dot_git;
  bool submodule = NamedIn(g.git_dir, CoreWorktree(g.git_dir)) == g.top;
  if (!own(g.git_dir) && !linked && !submodule) {
    return g.dot_git + " names " + g.git_dir +
           ", which git did not make for this directory (neither its gitdir file nor its "
           "core.worktree points back; `git worktree repair` mends a moved worktree)";
  }
  if (g.common_dir != g.git_dir && !IsUnder(g.git_dir, g.common_dir + "/worktrees") &&
      !(own(g.git_dir) && own(g.common_dir))) {
    return g.git_dir + "/commondir names " + g.common_dir + ", which does not hold that git dir";
  }
  return "";
}

}  // namespace

GitDirs FindGitDirs(const std::string& cwd) {
  GitDirs g;
  std::error_code ec;
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    fs::path dotgit = dir / ".git";
    if (fs::is_symlink(fs::symlink_status(dotgit, ec))) {
      // Git follows it; the sandbox would bind what it names, which may be anything.
      g.refused = dotgit.string() + " is a symbolic link (the sandbox binds only a .git that is "
                                    "where git would write it)";
      return g;
    }
    if (fs::is_directory(dotgit, ec)) {
      if (!IsGitDirectory(dotgit.string())) {
        if (dir == dir.root_path()) break;
        continue;  // not a repository: git looks further up
      }
      g.git_dir = Canonical(dotgit.string());
      g.common_dir = g.git_dir;  // never a commondir file's (see the header)
      g.dot_git = g.git_dir;
      g.top = dir.string();
      if (g.git_dir.empty()) g = GitDirs{};
      return g;
    } else if (fs::is_regular_file(dotgit, ec)) {
      g.dot_git = Canonical(dotgit.string());
      std::string line = FirstLineOf(dotgit);
      std::string target = line.rfind("gitdir:", 0) == 0 ? line.substr(7) : "";
      target.erase(0, target.find_first_not_of(' '));
      fs::path t(target);
      if (!target.empty()) g.git_dir = Canonical((t.is_absolute() ? t : dir / t).string());
      if (!g.git_dir.empty() && !fs::is_regular_file(fs::path(g.git_dir) / "HEAD", ec)) {
        g.git_dir.clear();  // no repository there: git fails on it too
      }
      // A .git file naming nothing: git stops here with an error. Only the file is known
      // (and kept read-only in the sandbox, so it cannot be pointed somewhere new).
      if (g.git_dir.empty()) return GitDirs{"", "", g.dot_git, "", ""};
      g.top = dir.string();
    }
    if (!g.git_dir.empty()) {
      std::string common = FirstLineOf(fs::path(g.git_dir) / "commondir");
      if (common.empty()) {
        g.common_dir = g.git_dir;
      } else {
        fs::path c(common);
        g.common_dir = Canonical((c.is_absolute() ? c : fs::path(g.git_dir) / c).string());
        if (g.common_dir.empty()) g.common_dir = g.git_dir;
      }
      return g;
    }
    if (dir == dir.root_path()) break;
  }
  return g;
}

std::string PlantedGitRedirect(const std::string& dir) {
  std::error_code ec;
  fs::path start = fs::weakly_canonical(dir, ec);  // where git will really look
  if (ec) return "";
  for (fs::path d = start; !d.empty(); d = d.parent_path()) {
    fs::path dotgit = d / ".git";
    if (fs::is_directory(dotgit, ec)) {
      fs::path planted = dotgit / "commondir";
      if (fs::exists(fs::symlink_status(planted, ec))) {
        return planted.string() +
               " exists: a main repository's .git never has one, so it was planted to send git "
               "to another config (which can run code); remove it after checking what it names";
      }
      if (IsGitDirectory(dotgit.string())) return "";
      if (d == d.root_path()) break;
      continue;  // not a repository (an empty .git, say): git looks further up
    }
    if (fs::exists(fs::symlink_status(dotgit, ec))) return "";  // a linked worktree's file
    if (d == d.root_path()) break;
  }
  return "";
}

Status ResolveSandboxPaths(SandboxPaths& p) {
  std::string cwd = Canonical(p.cwd);
  if (cwd.empty()) return FailedPrecondition("sandbox: the working directory " + p.cwd + " does not exist");
  p.cwd = cwd;
  p.dispatch_dir = Canonical(p.dispatch_dir);
  p.state_dir = Canonical(p.state_dir);
  p.socket = Canonical(p.socket);
  if (!p.socket_source.empty()) p.socket_source = Canonical(p.socket_source);
  p.home = Canonical(p.home);
  p.config_file = Canonical(p.config_file);
  std::vector<std::string> ro;
  for (const auto& f : p.readonly) {
    std::string c = Canonical(f);
    if (!c.empty()) ro.push_back(c);
  }
  p.readonly = std::move(ro);
  std::vector<std::string> runtime;
  for (const auto& d : p.runtime_dirs) {
    std::string c = Canonical(d);
    if (!c.empty() && std::find(runtime.begin(), runtime.end(), c) == runtime.end()) {
      runtime.push_back(c);
    }
  }
  p.runtime_dirs = std::move(runtime);
  if (IsUnder(p.cwd, p.state_dir) && !IsUnder(p.cwd, p.dispatch_dir)) {
    return FailedPrecondition("sandbox: the terminal's directory " + p.cwd +
                              " is inside the daemon's state directory, which a sandboxed worker "
                              "may not see; give the terminal another --cwd");
  }
  p.git = FindGitDirs(p.cwd);
  if (std::string why = UntrustedGitDirs(p); !why.empty()) {
    return FailedPrecondition("sandbox: " + why + "; the worker would get it writable");
  }
  return Status::Ok();
}

std::vector<std::string> BwrapArgv(const SandboxPaths& p, const std::vector<std::string>& command) {
  std::vector<Mount> mounts;
  mounts.push_back({Kind::kHideDir, "/tmp"});  // a private /tmp
  if (!p.state_dir.empty()) mounts.push_back({Kind::kHideDir, p.state_dir});
  if (!p.socket.empty() && MayHide(Parent(p.socket), p)) {
    mounts.push_back({Kind::kHideDir, Parent(p.socket)});
  }
  for (const auto& d : p.runtime_dirs) {
    if (MayHide(d, p) && !IsUnder(p.cwd, d)) mounts.push_back({Kind::kHideDir, d});
  }
  if (!p.config_file.empty()) {
    std::string dir = Parent(p.config_file);
    mounts.push_back(MayHide(dir, p) ? Mount{Kind::kHideDir, dir}
                                     : Mount{Kind::kHideFile, p.config_file});
  }
  mounts.push_back({Kind::kBind, p.cwd});
  if (!p.dispatch_dir.empty()) mounts.push_back({Kind::kBind, p.dispatch_dir});
  if (!p.socket.empty() && !p.read_only) {
    mounts.push_back({Kind::kBind, p.socket, p.socket_source});
  }
  for (const auto& f : p.readonly) mounts.push_back({Kind::kReadOnlyTry, f});
  // A commit writes objects, refs, logs and the worktree's own git dir; never the hooks or the
  // config, which would run code or change behaviour outside the sandbox.
  const GitDirs& g = p.git;
  if (!g.git_dir.empty()) {
    if (g.git_dir == g.common_dir) {
      mounts.push_back({Kind::kBind, g.git_dir});
      // Other worktrees' and submodules' git dirs: rewritten, they would point the daemon's
      // git there (a flow's worktree, a submodule) at a git dir of the worker's.
      mounts.push_back({Kind::kReadOnlyTry, g.git_dir + "/worktrees"});
      mounts.push_back({Kind::kReadOnlyTry, g.git_dir + "/modules"});
    } else {
      mounts.push_back({Kind::kReadOnlyTry, g.common_dir});
      for (const char* sub : {"/objects", "/refs", "/logs"}) {
        mounts.push_back({Kind::kBindTry, g.common_dir + sub});
      }
      mounts.push_back({Kind::kBind, g.git_dir});
      // What ties the worktree to its repository stays as it is: rewritten, it would point
      // the daemon's own git (run after the worker) at a git dir and config of the worker's.
      mounts.push_back({Kind::kReadOnlyTry, g.git_dir + "/commondir"});
      mounts.push_back({Kind::kReadOnlyTry, g.git_dir + "/gitdir"});
    }
    mounts.push_back({Kind::kReadOnlyTry, g.common_dir + "/hooks"});
    mounts.push_back({Kind::kReadOnlyTry, g.common_dir + "/config"});
  }
  // A linked worktree's or a submodule's .git file stays pointing where git wrote it.
  if (!g.dot_git.empty() && g.dot_git != g.git_dir) {
    mounts.push_back({Kind::kReadOnlyTry, g.dot_git});
  }
  if (p.read_only) {
    // What was writable is only visible: bound read-only where it would have been bound.
    for (auto& m : mounts) {
      if (m.kind == Kind::kBind || m.kind == Kind::kBindTry) m = {Kind::kReadOnlyTry, m.path};
    }
    // The whole worktree too: git, finding a hidden parent (/tmp) between a subfolder cwd and
    // the worktree's top, would stop at that file-system boundary.
    if (!g.top.empty()) mounts.push_back({Kind::kReadOnlyTry, g.top});
  }
  std::stable_sort(mounts.begin(), mounts.end(), [](const Mount& a, const Mount& b) {
    size_t da = Depth(a.path), db = Depth(b.path);
    return da != db ? da < db : a.kind < b.kind;
  });
  std::vector<std::string> argv = {"bwrap",         "--die-with-parent", "--new-session",
                                   "--unshare-pid", "--unshare-ipc",     "--unshare-uts",
                                   "--unshare-cgroup-try",
                                   "--ro-bind",     "/",                 "/",
                                   "--dev",         "/dev",              "--proc",
                                   "/proc"};
  if (p.read_only) argv.push_back("--unshare-net");
  for (const auto& m : mounts) {
    switch (m.kind) {
      case Kind::kHideDir:
        argv.insert(argv.end(), {"--tmpfs", m.path});
        break;
      case Kind::kHideFile:
        argv.insert(argv.end(), {"--ro-bind", "/dev/null", m.path});
        break;
      case Kind::kBind:
        argv.insert(argv.end(), {"--bind", m.source.empty() ? m.path : m.source, m.path});
        break;
      case Kind::kBindTry:
        argv.insert(argv.end(), {"--bind-try", m.path, m.path});
        break;
      case Kind::kReadOnlyTry:
        argv.insert(argv.end(), {"--ro-bind-try", m.path, m.path});
        break;
    }
  }
  argv.insert(argv.end(), {"--chdir", p.cwd, "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

}  // namespace conclave::exec
