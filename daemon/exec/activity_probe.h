// ActivityProbe: how much a run's process tree has worked so far — CPU time (utime + stime +
// cutime + cstime of /proc/<pid>/stat) and bytes read + written (rchar + wchar of
// /proc/<pid>/io), summed over the run's leader, its descendants (the ppid walk) and its
// process group. The counters only grow while the tree keeps its members; the caller compares
// two samples. A tree any of whose entries could not be read is `known = false`: unknown is
// never taken as idle. ProcActivityProbe reads /proc; tests substitute a fake.
// Thread-safety: Sample may run on any thread (the helper pool), never on the loop — it scans
// /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace conclave::exec {

struct TreeActivity {
  bool known = false;    // false: /proc (or one of the tree's entries) was unreadable
  int64_t cpu_ms = 0;    // CPU used by the tree so far
  int64_t io_bytes = 0;  // bytes read + written by the tree so far
  int processes = 0;     // members found
};

class ActivityProbe {
 public:
  virtual ~ActivityProbe() = default;
  // One sample per root (a run's leader, which also leads its process group), in order.
  virtual std::vector<TreeActivity> Sample(const std::vector<pid_t>& roots) = 0;
};

class ProcActivityProbe final : public ActivityProbe {
 public:
  std::vector<TreeActivity> Sample(const std::vector<pid_t>& roots) override;
};

}  // namespace conclave::exec
