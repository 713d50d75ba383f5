#include "verifier-service/src/server/blocking_pool.h"

#include <atomic>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

TEST(VerifierBlockingPoolTest, RunsWork) {
  BlockingPool pool(2, 16);
  absl::BlockingCounter done(10);
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(pool.TrySubmit([&] {
      ran.fetch_add(1);
      done.DecrementCount();
    }));
  }
  done.Wait();
  EXPECT_EQ(ran.load(), 10);
}

TEST(VerifierBlockingPoolTest, RefusesWhenQueueIsFull) {
  BlockingPool pool(1, 2);
  absl::Notification started;
  absl::Notification release;
  ASSERT_TRUE(pool.TrySubmit([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();  // The only thread is busy; the queue is empty.
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  EXPECT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  EXPECT_EQ(pool.queued(), 2u);
  bool refused_ran = false;
  EXPECT_FALSE(pool.TrySubmit([&] { refused_ran = true; }));
  release.Notify();
  pool.Stop();
  EXPECT_EQ(ran.load(), 2);
  EXPECT_FALSE(refused_ran);
}

TEST(VerifierBlockingPoolTest, StopDrainsQueuedWorkThenRefuses) {
  BlockingPool pool(1, 100);
  absl::Notification release;
  ASSERT_TRUE(pool.TrySubmit([&] { release.WaitForNotification(); }));
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(pool.TrySubmit([&] { ran.fetch_add(1); }));
  }
  release.Notify();
  pool.Stop();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_FALSE(pool.TrySubmit([] {}));
  pool.Stop();  // Idempotent.
}

}  // namespace
}  // namespace portcullis::verifier::server
