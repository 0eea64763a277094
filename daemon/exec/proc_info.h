// Small /proc and signal helpers for supervising processes: start times (so a recycled pid is
// never taken for the process we started), parents, process groups, and a caller's ancestry
// (is it a descendant of the daemon, through which processes).
// Thread-safety: all functions read /proc and may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace conclave::exec {

struct ProcStat {
  pid_t pid = 0;
  char state = '?';  // field 3: R, S, D, Z (exited, not reaped yet), ...
  pid_t ppid = 0;
  pid_t pgid = 0;
  int64_t start_time = 0;  // field 22 (clock ticks since boot)
  int64_t utime = 0, stime = 0;  // fields 14, 15 (clock ticks)
  int64_t cutime = 0, cstime = 0;  // fields 16, 17: reaped children's (clock ticks)
  uint64_t flags = 0;              // field 9: the kernel's PF_* flags
};

// /proc/<pid>/stat, parsed with bounds; nullopt when the process is gone or unreadable.
std::optional<ProcStat> ReadProcStat(pid_t pid);
// Field 22 of /proc/<pid>/stat (clock ticks since boot); 0 when the process is gone.
int64_t ReadProcStartTime(pid_t pid);
// The start time (field 22) of a process forked between two CLOCK_BOOTTIME readings, without
// reading /proc: the kernel stamps a new process with the boot-time clock and shows it in
// clock ticks, so when both readings fall in the same tick, that tick is the start time.
// nullopt when they straddle a tick boundary (read /proc then).
struct BootTicks {
  int64_t ns = 0;  // CLOCK_BOOTTIME
  static BootTicks Now();
};
std::optional<int64_t> StartTimeBetween(BootTicks before, BootTicks after);
// True when any process is in group pgid (kill(-pgid, 0) succeeds).
bool ProcessGroupAlive(pid_t pgid);
// Sends sig to the whole group; ignores ESRCH.
void SignalGroup(pid_t pgid, int sig);
// True when pid exists and its start time equals expected (so it is not a recycled pid).
bool SameProcess(pid_t pid, int64_t expected_start_time);
// SameProcess, and it has not exited (a zombie whose parent does not reap it counts as gone).
bool StillRunning(pid_t pid, int64_t expected_start_time);

struct ProcessLink {
  pid_t pid = 0;
  int64_t start_time = 0;
};

// A process's ancestry, read at once: the chain from pid up to (not including) `ancestor`, and
// whether `ancestor` was reached. Each link carries its start time, so the chain can be
// matched later against the processes the daemon started without trusting a reused pid.
struct Ancestry {
  std::vector<ProcessLink> chain;
  bool descends = false;
  // The walk reached init (or the ancestor). False when it stopped early — a link unreadable
  // or gone, or a chain deeper than the walk goes — so "not a descendant" is not known.
  bool complete = false;
};
Ancestry ReadAncestry(pid_t pid, pid_t ancestor);

// How long one FindProcessesWithEnv waits, in all, for processes whose environment reads
// empty (one inside an execve shows none for a moment).
inline constexpr std::chrono::milliseconds kEmptyEnvBudget{250};

// Live processes of this effective uid (other than the caller) whose initial environment
// (/proc/<pid>/environ) holds every one of these exact NAME=VALUE entries: how recovery finds
// a worker it started but whose pid never reached the store or the spawn journal — and,
// besides, a variable of each of `names` (any value). Unreadable processes are skipped.
std::vector<ProcStat> FindProcessesWithEnv(const std::vector<std::string>& entries,
                                           const std::vector<std::string>& names = {});

// The values of these variables in pid's initial environment (missing ones absent).
std::map<std::string, std::string> ReadEnvValues(pid_t pid, const std::vector<std::string>& names);

// /proc/<pid>/exe ("" when unreadable).
std::string ReadProcExe(pid_t pid);
// The terminal device pid's stdin is (/dev/pts/N, /dev/ttyN, /dev/console), "" when its stdin
// is not a terminal or cannot be read.
std::string ReadProcStdinTty(pid_t pid);

}  // namespace conclave::exec
