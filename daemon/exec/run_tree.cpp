#include "exec/run_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <charconv>
#include <future>
#include <map>
#include <set>

#include "common/thread_name.h"
#include "exec/child_registry.h"

namespace conclave::exec {
namespace {

std::vector<pid_t> NumericEntries(const char* dir_path) {
  std::vector<pid_t> out;
  DIR* dir = opendir(dir_path);
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    pid_t pid = 0;
    std::string_view name(e->d_name);
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec == std::errc() && p == name.data() + name.size() && pid > 1) out.push_back(pid);
  }
  closedir(dir);
  return out;
}

}  // namespace

std::vector<ProcStat> FindRunProcesses(const RunMarks& m) {
  const uid_t me = geteuid();
  const pid_t self = getpid();
  std::map<pid_t, ProcStat> all;
  for (pid_t pid : NumericEntries("/proc")) {
    if (pid == self) continue;
    struct stat st {};
    if (stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0 || st.st_uid != me) continue;
    if (auto ps = ReadProcStat(pid)) all[pid] = *ps;
  }
  std::set<pid_t> roots;
  auto leader = all.find(m.leader);
  if (leader != all.end() && leader->second.start_time == m.leader_start) roots.insert(m.leader);
  if (!m.env.empty()) {
    for (const auto& ps : FindProcessesWithEnv(m.env, m.env_names)) {
      if (all.count(ps.pid)) roots.insert(ps.pid);
    }
  }
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, ps] : all) children.emplace(ps.ppid, pid);
  std::set<pid_t> members;
  std::vector<pid_t> pending(roots.begin(), roots.end());
  while (!pending.empty()) {
    pid_t p = pending.back();
    pending.pop_back();
    if (!members.insert(p).second) continue;
    auto [b, e] = children.equal_range(p);
    for (auto it = b; it != e; ++it) pending.push_back(it->second);
  }
  std::string spare = m.spare_leader_exe && leader != all.end() ? ReadProcExe(m.leader) : "";
  std::vector<ProcStat> out;
  for (pid_t p : members) {
    const ProcStat& ps = all[p];
    if (m.skip_leader_group && ps.pgid == m.leader) continue;
    if (!spare.empty() && ReadProcExe(p) == spare) continue;
    out.push_back(ps);
  }
  return out;
}

int SignalProcesses(const std::vector<ProcStat>& procs, int sig) {
  int sent = 0;
  for (const auto& ps : procs) {
    int fd = static_cast<int>(syscall(SYS_pidfd_open, ps.pid, 0));
    if (fd < 0) {
      // A kernel without pidfds: the start-time check, then the pid (a narrow window).
      if (errno == ENOSYS && ReadProcStartTime(ps.pid) == ps.start_time && kill(ps.pid, sig) == 0) {
        ++sent;
      }
      continue;
    }
    // The pidfd pins this process: if its start time still matches, it is the one scanned.
    if (ReadProcStartTime(ps.pid) == ps.start_time &&
        syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0) {
      ++sent;
    }
    close(fd);
  }
  return sent;
}

bool SignalGroupOfLeader(pid_t leader, int64_t start_time, int sig) {
  if (leader <= 1 || start_time == 0) return false;
  return ReadProcStartTime(leader) == start_time && kill(-leader, sig) == 0;
}

std::vector<ProcStat> ProcessesInGroup(pid_t pgid) {
  std::vector<ProcStat> out;
  if (pgid <= 1) return out;
  const uid_t me = geteuid();
  for (pid_t pid : NumericEntries("/proc")) {
    struct stat st {};
    if (stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0 || st.st_uid != me) continue;
    if (auto ps = ReadProcStat(pid); ps && ps->pgid == pgid) out.push_back(*ps);
  }
  return out;
}

bool HasUntrackedChildren() {
  // An orphan is re-parented to the subreaper's first live thread, the thread-group leader
  // (the kernel's find_alive_thread), so only the leader's list can hold one; the children
  // other threads start (helper commands) are tracked or not this function's business. One
  // small read per finished run instead of one per thread of the daemon, through a descriptor
  // opened once: a read from offset 0 makes the kernel list the children afresh, and the path
  // walk through /proc and the close that every run paid are gone.
  // Opened again after a failure that may pass (too many open files), not after ENOENT (no
  // CONFIG_PROC_CHILDREN). Only the loop calls this; two threads at once would share the
  // descriptor, and a list mixed from two reads errs towards a scan.
  static std::atomic<int> cached{-1};
  static std::atomic<bool> absent{false};
  int fd = cached.load(std::memory_order_acquire);
  if (fd < 0) {
    if (absent.load(std::memory_order_relaxed)) return true;  // cannot tell: scan
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/children", static_cast<int>(getpid()));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) absent.store(true, std::memory_order_relaxed);
      return true;
    }
    int none = -1;
    if (!cached.compare_exchange_strong(none, fd, std::memory_order_acq_rel)) {
      close(fd);  // another thread's is kept
      fd = none;
    }
  }
  std::string text;
  char buf[4096];
  for (off_t at = 0;;) {
    ssize_t n = pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
  const char* p = text.c_str();
  for (;;) {
    char* end = nullptr;
    long child = std::strtol(p, &end, 10);
    if (end == p) return false;
    if (!ChildRegistry::Instance().IsTracked(static_cast<pid_t>(child))) return true;
    p = end;
  }
}

TreeSweeper::TreeSweeper() { NamePoolThreads(pool_, 1, "tree-sweeper"); }

TreeSweeper::~TreeSweeper() { pool_.join(); }

void TreeSweeper::Signal(RunMarks marks, int sig) {
  boost::asio::post(pool_, [marks = std::move(marks), sig] {
    SignalProcesses(FindRunProcesses(marks), sig);
  });
}

void TreeSweeper::SweepAfterExit(RunMarks marks) {
  if (!HasUntrackedChildren()) return;
  boost::asio::post(pool_, [marks = std::move(marks)] {
    SignalProcesses(FindRunProcesses(marks), SIGKILL);
  });
}

void TreeSweeper::Drain() {
  std::promise<void> done;
  boost::asio::post(pool_, [&done] { done.set_value(); });
  done.get_future().wait();
}

}  // namespace conclave::exec
