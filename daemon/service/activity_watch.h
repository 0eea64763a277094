// ActivityWatch: whether silent runs are working. For every watched run it samples the process
// tree's CPU time and I/O bytes (exec::ActivityProbe, which scans /proc — on the helper pool,
// never on the loop) a few times per idle window, and reports on the loop:
//   active  — since the run's last sign of activity its tree used ≥ liveness_cpu_ms of CPU or
//             read + wrote ≥ liveness_io_bytes (the measure restarts from there);
//   unknown — the tree's /proc entries could not be read: unknown is never taken as idle.
// A threshold of 0 turns its signal off; both 0 turn the watch off. One scan is in flight at a
// time, shared by all runs. Loop thread only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "exec/activity_probe.h"
#include "service/core.h"

namespace conclave::service {

class ActivityWatch {
 public:
  enum class Signal { kActive, kUnknown };
  struct Report {
    int64_t dispatch_id = 0;
    Signal signal = Signal::kActive;
    int64_t cpu_ms = 0, io_bytes = 0;  // used since the previous report (kActive)
  };
  using Listener = std::function<void(const Report&)>;

  ActivityWatch(Core& core, Listener listener);
  ~ActivityWatch();

  // Starts watching a run whose idle window is `window` (its idle timeout, else its idle kill).
  void Watch(int64_t dispatch_id, pid_t pid, std::chrono::milliseconds window);
  void Forget(int64_t dispatch_id);
  // Scans answered so far (tests wait on it instead of sleeping).
  int64_t scans() const { return scans_; }

 private:
  struct Watched {
    pid_t pid = 0;
    int64_t window_ms = 0;
    std::optional<exec::TreeActivity> base;  // the counters at the last report (or first sample)
  };
  void Arm();
  void Scan();
  void OnSamples(const std::map<int64_t, pid_t>& asked, const std::vector<exec::TreeActivity>& got);
  bool Enabled() const;

  Core& core_;
  Listener listener_;
  std::map<int64_t, Watched> watched_;
  std::shared_ptr<Alarm> alarm_;
  int64_t alarm_at_ms_ = 0;
  bool scanning_ = false;
  int64_t scans_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // guards posted answers
};

}  // namespace conclave::service
