#include "ingest-gateway/src/status_response.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GatewayStatusResponseTest, UnavailableIs503WithRetryAfterAndNoInternalMessage) {
  const http::HttpResponse response =
      ResponseForStatus(absl::UnavailableError("connect to 10.0.0.7:50051 failed"), 9);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "9");
  EXPECT_THAT(response.body, HasSubstr(R"("error":"unavailable")"));
  EXPECT_THAT(response.body, Not(HasSubstr("10.0.0.7")));
}

TEST(GatewayStatusResponseTest, DeadlineExceededIs503) {
  const http::HttpResponse response = ResponseForStatus(absl::DeadlineExceededError("slow"), 5);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "5");
}

TEST(GatewayStatusResponseTest, FinalErrorsHaveNoRetryAfter) {
  const http::HttpResponse internal = ResponseForStatus(absl::InternalError("SELECT * ..."), 5);
  EXPECT_EQ(internal.status, 500);
  EXPECT_FALSE(internal.headers.Get("Retry-After").has_value());
  EXPECT_THAT(internal.body, Not(HasSubstr("SELECT")));
  EXPECT_EQ(ResponseForStatus(absl::InvalidArgumentError("x"), 5).status, 400);
  EXPECT_EQ(ResponseForStatus(absl::NotFoundError("x"), 5).status, 404);
}

}  // namespace
}  // namespace portcullis::gateway
