// FakeActivityProbe: an ActivityProbe whose figures the test sets per pid — the service layer's
// liveness rules without real processes. A pid the test never set reads as known and idle
// (zero CPU, zero I/O). Counts the scans it answered. Thread-safety: Sample runs on the helper
// pool, the setters on the test's thread; a mutex guards both.
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "exec/activity_probe.h"

namespace conclave::testing {

class FakeActivityProbe final : public exec::ActivityProbe {
 public:
  std::vector<exec::TreeActivity> Sample(const std::vector<pid_t>& roots) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<exec::TreeActivity> out;
    for (pid_t pid : roots) {
      auto it = by_pid_.find(pid);
      exec::TreeActivity idle;
      idle.known = true;
      idle.processes = 1;
      out.push_back(it == by_pid_.end() ? idle : it->second);
    }
    ++samples_;
    return out;
  }
  void Set(pid_t pid, int64_t cpu_ms, int64_t io_bytes, bool known = true) {
    std::lock_guard<std::mutex> lock(mu_);
    exec::TreeActivity a;
    a.known = known;
    a.cpu_ms = cpu_ms;
    a.io_bytes = io_bytes;
    a.processes = 1;
    by_pid_[pid] = a;
  }
  int samples() {
    std::lock_guard<std::mutex> lock(mu_);
    return samples_;
  }

 private:
  std::mutex mu_;
  std::map<pid_t, exec::TreeActivity> by_pid_;
  int samples_ = 0;
};

}  // namespace conclave::testing
