#include "exec/proc_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>

#include "common/read_file.h"

namespace conclave::exec {

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  // One open and read into a stack buffer (an ifstream costs more than the read itself; this
  // runs at every spawn and every activity sample).
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n <= 0) return std::nullopt;
  std::string_view line(buf, static_cast<size_t>(n));
  if (size_t nl = line.find('\n'); nl != std::string_view::npos) line = line.substr(0, nl);
  // comm (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return std::nullopt;
  std::string_view rest(line);
  rest.remove_prefix(close + 2);
  ProcStat st;
  st.pid = pid;
  st.state = rest.empty() ? '?' : rest[0];
  int field = 3;
  while (!rest.empty() && field <= 22) {
    size_t sp = rest.find(' ');
    std::string_view tok = rest.substr(0, sp);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    bool num = ec == std::errc() && p == tok.data() + tok.size();
    if (field == 4 && num) st.ppid = static_cast<pid_t>(v);
    if (field == 5 && num) st.pgid = static_cast<pid_t>(v);
    if (field == 9 && num) st.flags = static_cast<uint64_t>(v);
    if (field == 14 && num) st.utime = v;
    if (field == 15 && num) st.stime = v;
    if (field == 16 && num) st.cutime = v;
    if (field == 17 && num) st.cstime = v;
    if (field == 22) {
      if (!num) return std::nullopt;
      st.start_time = v;
      return st;
    }
    if (sp == std::string_view::npos) break;
    rest.remove_prefix(sp + 1);
    ++field;
  }
  return std::nullopt;
}

int64_t ReadProcStartTime(pid_t pid) {
  auto st = ReadProcStat(pid);
  return st ? st->start_time : 0;
}

BootTicks BootTicks::Now() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return {int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec};
}

std::optional<int64_t> StartTimeBetween(BootTicks before, BootTicks after) {
  static const int64_t kNsPerTick = [] {
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 && 1000000000 % hz == 0 ? 1000000000 / hz : 0;
  }();
  if (kNsPerTick == 0 || before.ns <= 0 || after.ns < before.ns) return std::nullopt;
  int64_t tick = before.ns / kNsPerTick;
  if (after.ns / kNsPerTick != tick) return std::nullopt;
  return tick;
}

bool ProcessGroupAlive(pid_t pgid) { return pgid > 0 && kill(-pgid, 0) == 0; }

void SignalGroup(pid_t pgid, int sig) {
  if (pgid > 1) kill(-pgid, sig);
}

bool SameProcess(pid_t pid, int64_t expected_start_time) {
  if (pid <= 1 || expected_start_time == 0) return false;
  return ReadProcStartTime(pid) == expected_start_time;
}

bool StillRunning(pid_t pid, int64_t expected_start_time) {
  if (pid <= 1 || expected_start_time == 0) return false;
  auto st = ReadProcStat(pid);
  return st && st->start_time == expected_start_time && st->state != 'Z' && st->state != 'X';
}

Ancestry ReadAncestry(pid_t pid, pid_t ancestor) {
  Ancestry a;
  pid_t cur = pid;
  for (int depth = 0; depth < 4096 && cur > 1; ++depth) {
    if (cur == ancestor) {
      a.descends = a.complete = true;
      return a;
    }
    auto st = ReadProcStat(cur);
    if (!st) {
      // Hidden but there (/proc mounted hidepid: another uid's process, such as sshd): none
      // of the daemon's workers runs under another uid, so the daemon is not above it.
      // Gone: nothing is known.
      a.complete = kill(cur, 0) == 0 || errno == EPERM;
      return a;
    }
    a.chain.push_back({cur, st->start_time});
    cur = st->ppid;
  }
  a.descends = cur == ancestor;
  a.complete = cur <= 1 || a.descends;
  return a;
}

namespace {
std::string ReadLink(const std::string& path) {
  char buf[4096];
  ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}
}  // namespace

std::string ReadProcExe(pid_t pid) {
  return pid > 0 ? ReadLink("/proc/" + std::to_string(pid) + "/exe") : std::string();
}

std::string ReadProcStdinTty(pid_t pid) {
  if (pid <= 0) return "";
  std::string target = ReadLink("/proc/" + std::to_string(pid) + "/fd/0");
  const bool tty = target.rfind("/dev/pts/", 0) == 0 || target.rfind("/dev/tty", 0) == 0 ||
                   target == "/dev/console";
  return tty ? target : "";
}

namespace {
constexpr uint64_t kKernelThread = 0x00200000;  // PF_KTHREAD

// Processes (pid, start time) whose environment stayed empty through a whole budget: given
// none, or hidden on purpose (prctl PR_SET_MM can empty it). Later scans read them once and
// do not wait for them again. One seen with an environment again is forgotten: it was only
// starved inside an execve for longer than the budget (a shell that execs itself at the lowest
// priority on a busy host), and the next execve it is caught in must be waited for, or every
// later scan that meets it there misses it. A worker can make every scan pay its budget (a new
// process without an environment before each scan, or one that hides it and shows it again),
// never more: each scan waits at most kEmptyEnvBudget in all, on the sweeper's thread or at
// start (recovery), never on the loop.
std::mutex empty_env_mu;
std::set<std::pair<pid_t, int64_t>> empty_env_seen;

// The NUL-separated entries of /proc/<pid>/environ (at most 1 MiB read); false if unreadable.
bool ReadEnviron(pid_t pid, std::unordered_set<std::string>* out) {
  char path[40];
  std::snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(pid));
  std::string data;
  if (!ReadFileInto(path, &data, 1u << 20)) return false;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\0', start);
    if (end == std::string::npos) end = data.size();
    out->emplace(data.substr(start, end - start));
    start = end + 1;
  }
  return true;
}
}  // namespace

std::map<std::string, std::string> ReadEnvValues(pid_t pid, const std::vector<std::string>& names) {
  std::map<std::string, std::string> out;
  std::unordered_set<std::string> env;
  if (!ReadEnviron(pid, &env)) return out;
  for (const auto& e : env) {
    for (const auto& name : names) {
      if (e.size() > name.size() && e[name.size()] == '=' && e.compare(0, name.size(), name) == 0) {
        out[name] = e.substr(name.size() + 1);
      }
    }
  }
  return out;
}

std::vector<ProcStat> FindProcessesWithEnv(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& names) {
  std::vector<ProcStat> found;
  DIR* dir = opendir("/proc");
  if (!dir) return found;
  const uid_t me = geteuid();
  const pid_t self = getpid();
  // A process in the middle of execve shows no environment for a moment (the old image's is
  // gone, the new one's not yet complete — the kernel sets the arguments before the
  // environment). That moment lasts as long as the new program takes to load, milliseconds on
  // a busy host, so such processes are set aside and looked at again, together, once the
  // scan is through: yields first, then 1 ms pauses, within one budget for the whole scan.
  struct Pending {
    ProcStat ps;
    bool wait;  // not one that stayed empty through an earlier scan's whole budget
  };
  std::vector<Pending> pending;
  auto matches = [&](const std::unordered_set<std::string>& env) {
    bool all = true;
    for (const auto& want : entries) all = all && env.count(want) > 0;
    for (const auto& name : names) {
      const std::string prefix = name + "=";
      all = all && std::any_of(env.begin(), env.end(), [&](const std::string& e) {
              return e.compare(0, prefix.size(), prefix) == 0;
            });
    }
    return all;
  };
  std::set<std::pair<pid_t, int64_t>> known_empty, forget;
  {
    std::lock_guard<std::mutex> lock(empty_env_mu);
    known_empty = empty_env_seen;
  }
  auto was_known_empty = [&](pid_t pid) {
    auto it = known_empty.lower_bound({pid, std::numeric_limits<int64_t>::min()});
    return it != known_empty.end() && it->first == pid;
  };
  while (dirent* e = readdir(dir)) {
    pid_t pid = 0;
    std::string_view name(e->d_name);
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec != std::errc() || p != name.data() + name.size() || pid <= 1 || pid == self) continue;
    struct stat st{};
    if (stat(("/proc/" + std::string(name)).c_str(), &st) != 0 || st.st_uid != me) continue;
    std::unordered_set<std::string> env;
    if (!ReadEnviron(pid, &env)) continue;
    if (env.empty()) {
      // Zombies and kernel threads have none and never will.
      auto ps = ReadProcStat(pid);
      if (!ps || ps->state == 'Z' || ps->state == 'X' || (ps->flags & kKernelThread)) continue;
      pending.push_back({*ps, known_empty.count({ps->pid, ps->start_time}) == 0});
      continue;
    }
    if (was_known_empty(pid)) {
      if (auto ps = ReadProcStat(pid)) forget.insert({pid, ps->start_time});
    }
    if (!matches(env)) continue;
    if (auto ps = ReadProcStat(pid)) found.push_back(*ps);
  }
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + kEmptyEnvBudget;
  constexpr timespec kPause{0, 1000000};  // 1 ms
  for (int round = 0; !pending.empty(); ++round) {
    // Every one is read again at least once; only those not known empty are waited for.
    std::vector<Pending> still;
    for (auto& c : pending) {
      std::unordered_set<std::string> env;
      if (!ReadEnviron(c.ps.pid, &env) || ReadProcStartTime(c.ps.pid) != c.ps.start_time) continue;
      if (!env.empty()) {
        if (!c.wait) forget.insert({c.ps.pid, c.ps.start_time});
        if (matches(env)) found.push_back(c.ps);
      } else if (c.wait) {
        still.push_back(c);
      }
    }
    pending = std::move(still);
    if (pending.empty()) break;
    if (clock::now() >= deadline) {
      std::lock_guard<std::mutex> lock(empty_env_mu);
      for (const auto& c : pending) empty_env_seen.insert({c.ps.pid, c.ps.start_time});
      break;
    }
    if (round >= 20) nanosleep(&kPause, nullptr);  // yielding alone spins through it
    sched_yield();
  }
  {
    // Forget the ones that are gone (their pid may come back with another start time), and
    // the ones seen with an environment.
    std::lock_guard<std::mutex> lock(empty_env_mu);
    for (const auto& key : forget) empty_env_seen.erase(key);
    for (auto it = empty_env_seen.begin(); it != empty_env_seen.end();) {
      it = ReadProcStartTime(it->first) == it->second ? std::next(it) : empty_env_seen.erase(it);
    }
  }
  closedir(dir);
  return found;
}

}  // namespace conclave::exec
