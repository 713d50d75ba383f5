// What senders see when the verifier goes away and comes back.
#include <boost/json.hpp>

#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

using VerifierOutageTest = StackTest;

TEST_F(VerifierOutageTest, SendersAreToldToRetryAndReadinessFollowsTheVerifier) {
  ASSERT_TRUE(stack_->ServeTarget("https://b.example/").ok());
  ASSERT_EQ(stack_->PostWebmention("https://a.example/1", "https://b.example/").status, 202);

  stack_->StopVerifier();
  const testing::HttpResult refused =
      stack_->PostWebmention("https://a.example/2", "https://b.example/");
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(refused.Header("retry-after"), "7");
  EXPECT_EQ(boost::json::parse(refused.body).at("error").as_string(), "unavailable");
  // Nothing from inside leaks: no address, port or gRPC wording in the body.
  EXPECT_EQ(refused.body.find("127.0.0.1"), std::string::npos) << refused.body;
  EXPECT_EQ(refused.body.find(std::to_string(stack_->grpc_port())), std::string::npos);

  const absl::Status not_ready = stack_->WaitForReadyz(503, absl::Seconds(10));
  EXPECT_TRUE(not_ready.ok()) << not_ready;
  EXPECT_EQ(stack_->Get("/healthz").status, 200);  // Liveness does not depend on the verifier.

  ASSERT_TRUE(stack_->StartVerifier().ok());
  const absl::Status ready_again = stack_->WaitForReadyz(200, absl::Seconds(20));
  EXPECT_TRUE(ready_again.ok()) << ready_again;
  EXPECT_EQ(stack_->PostWebmention("https://a.example/3", "https://b.example/").status, 202);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 2);
}

}  // namespace
}  // namespace portcullis::integration
