#include "common/status/status_macros.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis {
namespace {

absl::Status FailIf(bool fail) {
  return fail ? absl::InvalidArgumentError("failed") : absl::OkStatus();
}

absl::Status Chain(bool fail, int* reached) {
  RETURN_IF_ERROR(FailIf(fail));
  *reached = 1;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Produce(bool fail) {
  if (fail) {
    return absl::UnavailableError("down");
  }
  return std::string("value");
}

absl::StatusOr<size_t> Consume(bool fail) {
  ASSIGN_OR_RETURN(const std::string value, Produce(fail));
  return value.size();
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtFirstFailure) {
  int reached = 0;
  EXPECT_EQ(Chain(true, &reached).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(Chain(false, &reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, AssignOrReturnPassesValueOrStatus) {
  EXPECT_EQ(Consume(false).value(), 5u);
  EXPECT_EQ(Consume(true).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace portcullis
