// Soak checks: the store against the ledger of what the daemon acknowledged (read with
// SQLite while the daemon is down, so nothing is mid-write), and the fake workers' processes
// (their pid files) against what must be gone.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "soak_load.h"

namespace soak {

// Reads the daemon's database incrementally: each call reads the soak's messages committed
// since the last call. Every failure is appended to problems.
class StoreCheck {
 public:
  explicit StoreCheck(std::string db_path) : db_path_(std::move(db_path)) {}
  // integrity_check, every acknowledged Send present once with its seq, no task with two
  // final worker_done messages; with all_ended, every dispatched task has exactly one.
  void Run(Ledger& ledger, bool all_ended, std::vector<std::string>& problems);
  size_t messages_seen() const { return seen_.size(); }
  std::map<std::string, int64_t> end_states() const { return end_states_; }

 private:
  std::string db_path_;
  int64_t last_seq_ = 0;
  std::map<std::string, int64_t> seen_;  // token -> seq
  std::map<std::string, int64_t> end_states_;  // final worker_done "state" -> count
};

struct WorkerPid {
  std::string file;  // w-<token> (the worker), g-<token> (grandchild), e-<token> (escapee)
  pid_t pid = 0;
  int64_t start_time = 0;  // /proc/<pid>/stat field 22 when read, 0 when it was gone
};
// /proc/<pid>/stat field 22 (0 when gone).
int64_t StartTime(pid_t pid);
// Every pid the fake workers wrote, with the start time of those alive now.
std::vector<WorkerPid> ReadPidFiles(const std::string& dir);
// Still that process (same start time), alive (not a zombie) and running the fake worker.
bool IsLiveWorker(pid_t pid, int64_t start_time);
// The processes among pids that are still alive at the deadline (waits on pidfds).
std::vector<WorkerPid> Survivors(const std::vector<WorkerPid>& pids,
                                 std::chrono::milliseconds within);
// Open file descriptors of a process.
int FdCount(pid_t pid);

}  // namespace soak
