#include "common/lifecycle/mutex_checks.h"

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace portcullis::lifecycle {
namespace {

// Takes two mutexes in one order, then in the other: no deadlock on one thread, but a lock-order
// cycle that Abseil's checker reports.
void TakeInBothOrders() {
  absl::Mutex a;
  absl::Mutex b;
  {
    absl::MutexLock first(&a);
    absl::MutexLock second(&b);
  }
  {
    absl::MutexLock first(&b);
    absl::MutexLock second(&a);
  }
}

TEST(MutexChecksTest, ALockOrderCycleAbortsUntilTheChecksAreSkipped) {
  // Debian's Abseil checks lock order on every Lock (it is built without NDEBUG).
  EXPECT_DEATH(TakeInBothOrders(), "deadlock");
  SkipMutexDeadlockChecks();
  TakeInBothOrders();  // Returns: nothing checks lock order any more.
}

}  // namespace
}  // namespace portcullis::lifecycle
