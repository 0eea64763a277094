#include "common/runtime.h"

#include <absl/synchronization/mutex.h>
#include <sched.h>

#include <atomic>

namespace conclave {
namespace {

// Set once BeginBackgroundThreads() moved a thread from SCHED_OTHER to SCHED_BATCH.
std::atomic<bool> g_batched{false};

bool SetPolicy(int policy) {
  sched_param p{};
  p.sched_priority = 0;
  return sched_setscheduler(0, policy, &p) == 0;  // 0: the calling thread (Linux)
}

}  // namespace

void ProductionRuntime() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

void BeginBackgroundThreads() {
  if (sched_getscheduler(0) != SCHED_OTHER) return;  // chosen by whoever started us: kept
  if (SetPolicy(SCHED_BATCH)) g_batched.store(true, std::memory_order_relaxed);
}

void EndBackgroundThreads() {
  if (g_batched.load(std::memory_order_relaxed) && sched_getscheduler(0) == SCHED_BATCH) {
    SetPolicy(SCHED_OTHER);
  }
}

bool InBackgroundThread() {
  return g_batched.load(std::memory_order_relaxed) && sched_getscheduler(0) == SCHED_BATCH;
}

}  // namespace conclave
