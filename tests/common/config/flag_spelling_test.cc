#include "common/config/flag_spelling.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace portcullis::config {
namespace {

std::vector<std::string> Rewrite(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  AcceptDashedFlagNames(static_cast<int>(argv.size()), argv.data());
  return args;
}

TEST(AcceptDashedFlagNamesTest, RewritesNamesNotValues) {
  EXPECT_EQ(Rewrite({"prog", "--migrate-only", "--grpc-listen=127.0.0.1:5", "-log-level=a-b"}),
            (std::vector<std::string>{"prog", "--migrate_only", "--grpc_listen=127.0.0.1:5",
                                      "-log_level=a-b"}));
}

TEST(AcceptDashedFlagNamesTest, LeavesPositionalsAndArgumentsAfterDoubleDash) {
  EXPECT_EQ(Rewrite({"prog", "mention-get", "--", "--not-a-flag"}),
            (std::vector<std::string>{"prog", "mention-get", "--", "--not-a-flag"}));
}

}  // namespace
}  // namespace portcullis::config
