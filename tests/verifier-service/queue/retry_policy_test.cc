#include "verifier-service/src/queue/retry_policy.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::queue {
namespace {

TEST(VerifierRetryPolicyTest, DoublesFromTheBaseUpToTheCapWithHalfJitter) {
  const RetryPolicy policy{absl::Seconds(10), absl::Seconds(100), 8};
  EXPECT_EQ(RetryDelay(policy, 1, 0.0), absl::Seconds(5));
  EXPECT_EQ(RetryDelay(policy, 1, 0.5), absl::Seconds(7.5));
  EXPECT_EQ(RetryDelay(policy, 2, 0.0), absl::Seconds(10));
  EXPECT_EQ(RetryDelay(policy, 3, 0.0), absl::Seconds(20));
  EXPECT_EQ(RetryDelay(policy, 4, 0.0), absl::Seconds(40));
  EXPECT_EQ(RetryDelay(policy, 5, 0.0), absl::Seconds(50));  // Capped at 100 s.
  EXPECT_EQ(RetryDelay(policy, 5, 1.0), absl::Seconds(100));
  EXPECT_EQ(RetryDelay(policy, 1000, 0.999999) <= absl::Seconds(100), true);
}

TEST(VerifierRetryPolicyTest, CheckRefusesNonsense) {
  EXPECT_TRUE(RetryPolicy{}.Check().ok());
  EXPECT_FALSE((RetryPolicy{absl::ZeroDuration(), absl::Seconds(1), 3}).Check().ok());
  EXPECT_FALSE((RetryPolicy{absl::Seconds(2), absl::Seconds(1), 3}).Check().ok());
  EXPECT_FALSE((RetryPolicy{absl::Seconds(1), absl::Seconds(1), 0}).Check().ok());
}

}  // namespace
}  // namespace portcullis::verifier::queue
