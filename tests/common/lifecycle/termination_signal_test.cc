#include "common/lifecycle/termination_signal.h"

#include <signal.h>

#include <future>

#include "gtest/gtest.h"

namespace portcullis::lifecycle {
namespace {

TEST(TerminationSignalTest, BlockedSigtermIsDeliveredToTheWaiter) {
  BlockTerminationSignals();
  std::future<int> received = std::async(std::launch::async, WaitForTerminationSignal);
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_EQ(received.get(), SIGTERM);
}

}  // namespace
}  // namespace portcullis::lifecycle
