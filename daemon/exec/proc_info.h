// Small /proc and signal helpers for supervising process groups.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace conclave::exec {

// Field 22 of /proc/<pid>/stat (clock ticks since boot); 0 when the process is gone.
int64_t ReadProcStartTime(pid_t pid);
// True when any process is in group pgid (kill(-pgid, 0) succeeds).
bool ProcessGroupAlive(pid_t pgid);
// Sends sig to the whole group; ignores ESRCH.
void SignalGroup(pid_t pgid, int sig);
// True when pid exists and its start time equals expected (so it is not a recycled pid).
bool SameProcess(pid_t pid, int64_t expected_start_time);

}  // namespace conclave::exec
