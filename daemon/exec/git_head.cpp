#include "exec/git_head.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <thread>

#include "common/read_file.h"

namespace conclave::exec {
namespace fs = std::filesystem;
namespace {

// The wait for leases' holders over one ReadGitHead: kLeaseWaitMs from the first file found
// held, in all (a holder that lets go of each file just in time cannot stretch it per file).
struct LeaseWait {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  bool leased = false;  // a holder outlasted the wait
};

// read() again while it failed because a file lease's holder had to let go first (errno
// EWOULDBLOCK from the non-blocking open, which started the break), until the wait's deadline;
// past it wait.leased is set and read()'s failure returned.
template <typename Read>
auto WaitingOutLease(const Read& read, LeaseWait& wait) -> decltype(read()) {
  for (int step_ms = 1;; step_ms = std::min(step_ms * 2, 50)) {
    errno = 0;
    auto got = read();
    if (got || errno != EWOULDBLOCK) return got;
    const auto now = std::chrono::steady_clock::now();
    if (!wait.deadline) wait.deadline = now + std::chrono::milliseconds(kLeaseWaitMs);
    if (wait.leased || now >= *wait.deadline) {
      wait.leased = true;
      return got;
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(step_ms), *wait.deadline - now));
  }
}

// The first line of a small regular file, without its line end; nullopt when unreadable, not a
// regular file or a link. A worker writes its repository: a ref it made a FIFO or a link to a
// device must not stall whoever reads it (the launcher's thread, at a dispatch's start), nor a
// link make the daemon read a file hidden from the worker.
std::optional<std::string> FirstLine(const fs::path& p) {
  std::string line;
  if (!ReadFirstLine(p.c_str(), &line, 4096, O_NOFOLLOW)) return std::nullopt;
  return line;
}

// The same for rel inside a git directory, through no link at all (a ref directory the worker
// made a link included) and never out of it.
std::optional<std::string> LineIn(const fs::path& dir, const std::string& rel) {
  std::string line;
  if (!ReadFirstLineBeneath(dir.string(), rel, &line)) return std::nullopt;
  return line;
}

bool IsHash(std::string_view s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A path a git file names: absolute, or relative to the file's directory.
fs::path Resolve(const fs::path& base, const std::string& named) {
  fs::path p(named);
  return (p.is_absolute() ? p : base / p).lexically_normal();
}

// Bigger than any packed-refs git writes for a repository a worker runs in: refused unread.
constexpr off_t kMaxPackedRefsBytes = 64 << 20;
constexpr size_t kMaxRefLine = 4096;

std::optional<std::string> PackedRef(const fs::path& common, const std::string& ref,
                                     LeaseWait& wait) {
  int fd = -1;
  WaitingOutLease([&] { return (fd = OpenBeneath(common.string(), "packed-refs")) >= 0; }, wait);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> found;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxPackedRefsBytes) {
    // Line by line until the ref is found: a big repository's packed-refs is read only as far
    // as needed. Each byte is looked at once; a line longer than any ref line is skipped.
    std::string line;
    bool skipping = false;
    char buf[65536];
    auto take = [&](std::string_view l) {
      if (l.empty() || l[0] == '#' || l[0] == '^') return;
      size_t sp = l.find(' ');
      if (sp == std::string_view::npos) return;
      std::string_view name = l.substr(sp + 1);
      while (!name.empty() && name.back() == '\r') name.remove_suffix(1);
      if (name == ref && IsHash(l.substr(0, sp))) found = std::string(l.substr(0, sp));
    };
    for (off_t total = 0; !found;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {  // a read error: no partial line counts
        close(fd);
        return std::nullopt;
      }
      if (n == 0) {
        if (!skipping) take(line);  // the last line, unterminated
        break;
      }
      total += n;
      if (total > kMaxPackedRefsBytes) break;  // grew past the limit since it was measured
      std::string_view chunk(buf, static_cast<size_t>(n));
      while (!found && !chunk.empty()) {
        size_t nl = chunk.find('\n');
        std::string_view part = chunk.substr(0, nl);
        if (!skipping) line.append(part);
        if (line.size() > kMaxRefLine) {
          skipping = true;
          line.clear();
        }
        if (nl == std::string_view::npos) break;
        if (!skipping) take(line);
        line.clear();
        skipping = false;
        chunk.remove_prefix(nl + 1);
      }
    }
  }
  close(fd);
  return found;
}

}  // namespace

bool IsGitDirectory(const std::string& dir) {
  std::error_code ec;
  fs::path d(dir);
  return fs::is_regular_file(d / "HEAD", ec) && fs::is_directory(d / "objects", ec) &&
         fs::is_directory(d / "refs", ec);
}

GitHead ReadGitHead(const std::string& dir) {
  GitHead out;
  LeaseWait wait;
  std::error_code ec;
  fs::path start = fs::absolute(dir, ec);
  if (ec) return out;
  // Walked up as a string, one stat per level: every dispatch in a terminal outside any
  // repository walks to "/", and path objects cost more than the stats.
  std::string cur = start.lexically_normal().string();
  while (cur.size() > 1 && cur.back() == '/') cur.pop_back();
  fs::path gitdir;
  std::string dotgit;
  for (int depth = 0; depth < 256; ++depth) {
    dotgit.assign(cur);
    if (dotgit.back() != '/') dotgit += '/';
    dotgit += ".git";
    struct stat st {};
    bool found = stat(dotgit.c_str(), &st) == 0;
    if (found && S_ISDIR(st.st_mode) && IsGitDirectory(dotgit)) {
      gitdir = dotgit;
      break;
    }
    if (found && S_ISREG(st.st_mode)) {
      // "gitdir: <path>" (a linked worktree or submodule)
      auto line = WaitingOutLease([&] { return FirstLine(dotgit); }, wait);
      out.leased = wait.leased;
      if (!line || line->rfind("gitdir: ", 0) != 0) return out;
      // Where the path really leads, as git and the sandbox resolve it (not by its words).
      gitdir = fs::canonical(Resolve(cur, line->substr(8)), ec);
      if (ec) return out;
      break;
    }
    if (cur == "/") return out;
    size_t slash = cur.rfind('/');
    if (slash == std::string::npos) return out;
    cur.resize(slash == 0 ? 1 : slash);
  }
  if (gitdir.empty()) return out;
  out.in_repo = true;
  // A linked worktree's git dir is <common>/worktrees/<id>; its commondir file says "../.."
  // and is not read (anywhere else one would be a redirect only a worker plants).
  fs::path common = gitdir;
  if (gitdir.parent_path().filename() == "worktrees") common = gitdir.parent_path().parent_path();
  // A file held by a lease past the wait ends the read: what comes after it (a loose ref's
  // packed value, say) may be stale, and an unknown start is judged more strictly than a
  // wrong one would be.
  auto line_in = [&out, &wait](const fs::path& dir, const std::string& rel) {
    auto line = wait.leased ? std::nullopt
                            : WaitingOutLease([&] { return LineIn(dir, rel); }, wait);
    out.leased = wait.leased;
    return line;
  };
  auto head = line_in(gitdir, "HEAD");
  for (int hops = 0; head && hops < 8; ++hops) {
    if (IsHash(*head)) {
      out.commit = *head;
      return out;
    }
    if (head->rfind("ref: ", 0) != 0) return out;
    std::string ref = head->substr(5);
    // Git keeps symbolic refs under refs/; an absolute path would name any file.
    if (ref.rfind("refs/", 0) != 0 || ref.find("..") != std::string::npos) return out;
    // Per-worktree refs live in the gitdir, shared ones in the common dir.
    head = line_in(gitdir, ref);
    if (!head) head = line_in(common, ref);
    if (!head && !out.leased) head = PackedRef(common, ref, wait);
    out.leased = wait.leased;
  }
  return out;  // unborn branch (no ref yet) or unreadable
}

}  // namespace conclave::exec
