#include "common/lifecycle/mutex_checks.h"

#include "absl/synchronization/mutex.h"

namespace portcullis::lifecycle {

void SkipMutexDeadlockChecks() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace portcullis::lifecycle
