#include "common/runtime.h"

#include <absl/synchronization/mutex.h>

namespace conclave {

void ProductionRuntime() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace conclave
