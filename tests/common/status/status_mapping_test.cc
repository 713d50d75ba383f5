#include "common/status/status_mapping.h"

#include "gtest/gtest.h"

namespace portcullis::status {
namespace {

TEST(StatusMappingTest, TransientFailuresTellSendersToRetry) {
  for (absl::StatusCode code : {absl::StatusCode::kUnavailable,
                                absl::StatusCode::kDeadlineExceeded}) {
    EXPECT_EQ(HttpStatusFor(code), 503) << absl::StatusCodeToString(code);
    EXPECT_TRUE(MappingFor(code).retryable);
  }
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_TRUE(MappingFor(absl::StatusCode::kResourceExhausted).retryable);
}

TEST(StatusMappingTest, CallerErrorsAreFinal) {
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_FALSE(MappingFor(absl::StatusCode::kInvalidArgument).retryable);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(absl::StatusCode::kUnauthenticated), 401);
}

TEST(StatusMappingTest, BugsAreServerErrorsWithoutRetry) {
  for (absl::StatusCode code : {absl::StatusCode::kInternal, absl::StatusCode::kUnknown,
                                absl::StatusCode::kDataLoss}) {
    EXPECT_EQ(HttpStatusFor(code), 500);
    EXPECT_FALSE(MappingFor(code).retryable);
    EXPECT_EQ(MappingFor(code).http_error, "internal_error");
  }
}

TEST(StatusMappingTest, NoCodeEverMapsTo410) {
  // Brokers read 410 as "disable this endpoint".
  for (int code = 0; code <= 16; ++code) {
    EXPECT_NE(HttpStatusFor(static_cast<absl::StatusCode>(code)), 410) << code;
  }
}

TEST(StatusMappingTest, EveryCodeRoundTripsThroughGrpc) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status original(static_cast<absl::StatusCode>(code), "why");
    const grpc::Status over_the_wire = ToGrpcStatus(original);
    EXPECT_EQ(static_cast<int>(over_the_wire.error_code()), code);
    EXPECT_EQ(FromGrpcStatus(over_the_wire), original);
  }
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(StatusMappingTest, UnknownCodesMapLikeUnknown) {
  EXPECT_EQ(HttpStatusFor(static_cast<absl::StatusCode>(999)), 500);
}

}  // namespace
}  // namespace portcullis::status
