// RunTree: every process that belongs to one worker run, wherever it went — the leader's
// descendants, and processes that left the tree (setsid, a double fork: re-parented to the
// daemon as child subreaper) found by the environment the run's processes were started with
// (this dispatch's CONCLAVE_SOCKET and CONCLAVE_DISPATCH_ID), with their descendants. A
// process that cleared its environment before exec and left the tree is not found; under the
// sandbox nothing leaves the run's pid namespace, which dies with it.
// Signals go through a pidfd opened after the process's start time was checked again, so a
// recycled pid is never signalled.
// TreeSweeper runs those scans on a thread of its own: they read /proc, never on the loop.
// Thread-safety: the functions may run on any thread; TreeSweeper's methods are thread-safe.
#pragma once

#include <sys/types.h>

#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/proc_info.h"

namespace conclave::exec {

struct RunMarks {
  pid_t leader = 0;  // also its process group
  int64_t leader_start = 0;
  std::vector<std::string> env;  // NAME=VALUE entries every process of the run started with
  std::vector<std::string> env_names;  // and variables it started with, whatever their value
  // Leave the leader's group out (it was signalled as a group already).
  bool skip_leader_group = false;
  // Leave out processes running the leader's executable: under bwrap, a SIGTERM to bwrap
  // itself would end everything inside at once with SIGKILL instead of letting it stop.
  bool spare_leader_exe = false;
};

// The run's processes (not the daemon itself), in no particular order.
std::vector<ProcStat> FindRunProcesses(const RunMarks& marks);
// Sends sig to each process still alive with the same start time; returns how many.
int SignalProcesses(const std::vector<ProcStat>& procs, int sig);
// Sends sig to the process group of `leader` only when that very process (same start time)
// holds its pid as it is checked — alive or an unreaped zombie — so the group id is still
// its group's, not a reused one (the window is the check itself). True when sent.
bool SignalGroupOfLeader(pid_t leader, int64_t start_time, int sig);
// The processes of this uid now in process group pgid (to signal one by one, by start time,
// once the leader may be gone).
std::vector<ProcStat> ProcessesInGroup(pid_t pgid);
// True when the daemon has a direct child that no owner tracks (ChildRegistry): an orphan
// re-parented to it, i.e. something left a run's process group.
bool HasUntrackedChildren();

class TreeSweeper {
 public:
  TreeSweeper();
  ~TreeSweeper();
  // Signals the run's processes (off the caller's thread).
  void Signal(RunMarks marks, int sig);
  // After the run's leader was reaped: SIGKILL whatever of the run is left outside its group.
  // Looks for an orphan on the caller's thread (one small read of procfs, cheaper than waking
  // a pool thread for it) and only then scans /proc, off the caller's thread.
  void SweepAfterExit(RunMarks marks);
  // Blocks until every queued scan has run (tests).
  void Drain();

 private:
  boost::asio::thread_pool pool_{1};
};

}  // namespace conclave::exec
