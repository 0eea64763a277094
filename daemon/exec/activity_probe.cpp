#include "exec/activity_probe.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "exec/proc_info.h"

namespace conclave::exec {
namespace {

std::optional<pid_t> PidOf(const char* name) {
  pid_t pid = 0;
  std::string_view s(name);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), pid);
  if (ec != std::errc() || p != s.data() + s.size() || pid <= 0) return std::nullopt;
  return pid;
}

// rchar + wchar of /proc/<pid>/io. nullopt: unreadable (other than gone); 0 with *gone set
// when the process vanished meanwhile.
std::optional<int64_t> ReadIoBytes(pid_t pid, bool* gone) {
  std::string path = "/proc/" + std::to_string(pid) + "/io";
  FILE* f = std::fopen(path.c_str(), "re");
  if (!f) {
    *gone = errno == ENOENT || errno == ESRCH;
    return std::nullopt;
  }
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  bool failed = std::ferror(f) != 0;
  int err = errno;
  std::fclose(f);
  if (failed || n == 0) {
    *gone = failed && (err == ESRCH || err == ENOENT);
    return std::nullopt;
  }
  std::string_view text(buf, n);
  int64_t total = 0;
  int found = 0;
  for (std::string_view key : {"rchar: ", "wchar: "}) {
    size_t at = text.find(key);
    if (at == std::string_view::npos) continue;
    std::string_view rest = text.substr(at + key.size());
    int64_t v = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
    if (ec != std::errc() || v < 0) continue;
    total += v;
    ++found;
  }
  if (found != 2) return std::nullopt;
  return total;
}

}  // namespace

std::vector<TreeActivity> ProcActivityProbe::Sample(const std::vector<pid_t>& roots) {
  std::vector<TreeActivity> out(roots.size());
  std::map<pid_t, ProcStat> procs;
  DIR* dir = opendir("/proc");
  if (!dir) return out;  // every tree unknown
  while (dirent* e = readdir(dir)) {
    auto pid = PidOf(e->d_name);
    if (!pid) continue;
    if (auto st = ReadProcStat(*pid)) procs[*pid] = *st;  // gone meanwhile: not a member
  }
  closedir(dir);
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, st] : procs) children.emplace(st.ppid, pid);
  static const int64_t ticks = [] {
    long t = sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<int64_t>(t) : 100;
  }();
  for (size_t i = 0; i < roots.size(); ++i) {
    pid_t root = roots[i];
    if (!procs.count(root)) continue;  // the leader is unreadable or gone: unknown
    // Members: the leader's descendants (a setsid'd one included) and its process group (an
    // orphan re-parented away from the tree).
    std::map<pid_t, bool> members;
    std::vector<pid_t> todo = {root};
    while (!todo.empty() && members.size() < 100000) {
      pid_t p = todo.back();
      todo.pop_back();
      if (!members.emplace(p, true).second) continue;
      auto [b, en] = children.equal_range(p);
      for (auto it = b; it != en; ++it) todo.push_back(it->second);
    }
    for (const auto& [pid, st] : procs) {
      if (st.pgid == root) members.emplace(pid, true);
    }
    TreeActivity a;
    a.known = true;
    int64_t ticks_used = 0;
    for (const auto& [pid, unused] : members) {
      const ProcStat& st = procs[pid];
      ticks_used += st.utime + st.stime + st.cutime + st.cstime;
      bool gone = false;
      auto io = ReadIoBytes(pid, &gone);
      if (io) {
        a.io_bytes += *io;
      } else if (!gone) {
        a.known = false;  // unreadable: this tree's I/O is unknown
      }
      ++a.processes;
    }
    a.cpu_ms = ticks_used * 1000 / ticks;
    out[i] = a;
  }
  return out;
}

}  // namespace conclave::exec
