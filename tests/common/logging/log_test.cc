#include "common/logging/log.h"

#include "gtest/gtest.h"

namespace portcullis::logging {
namespace {

TEST(LoggingInitTest, AcceptsKnownLevels) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "off"}) {
    EXPECT_TRUE(Init("test", level).ok()) << level;
  }
  EXPECT_EQ(spdlog::default_logger()->name(), "test");
}

TEST(LoggingInitTest, RefusesUnknownLevelWithClearMessage) {
  const absl::Status status = Init("test", "verbose");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("verbose"), absl::string_view::npos);
}

}  // namespace
}  // namespace portcullis::logging
