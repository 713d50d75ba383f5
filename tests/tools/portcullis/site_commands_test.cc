#include "tools/portcullis/src/site_commands.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace v1 = verifier::v1;

TEST(SiteCommandsTest, TrailingStarMeansPrefix) {
  const v1::AddTargetRequest exact = TargetArgument("https://blog.example/about");
  EXPECT_EQ(exact.url(), "https://blog.example/about");
  EXPECT_EQ(exact.kind(), v1::TARGET_KIND_EXACT);
  const v1::AddTargetRequest prefix = TargetArgument("https://blog.example/posts/*");
  EXPECT_EQ(prefix.url(), "https://blog.example/posts/");
  EXPECT_EQ(prefix.kind(), v1::TARGET_KIND_PREFIX);
}

TEST(SiteCommandsTest, TargetFileSkipsBlanksAndCommentsAndKeepsLineNumbers) {
  std::vector<int> lines;
  const std::vector<v1::AddTargetRequest> entries = ParseTargetFile(
      "# targets\n\nhttps://a.example/1\r\n   https://a.example/dir/*  \n#x\nhttps://a.example/2",
      &lines);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].url(), "https://a.example/1");
  EXPECT_EQ(entries[1].url(), "https://a.example/dir/");
  EXPECT_EQ(entries[1].kind(), v1::TARGET_KIND_PREFIX);
  EXPECT_EQ(entries[2].url(), "https://a.example/2");
  EXPECT_EQ(lines, (std::vector<int>{3, 4, 6}));
}

TEST(SiteCommandsTest, UsageErrorsSendNothingAndExit2) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"site"},
                                                                {"site", "rename", "a"},
                                                                {"site", "add"},
                                                                {"site", "list", "x"},
                                                                {"target"},
                                                                {"target", "add"},
                                                                {"target", "import"},
                                                                {"target", "list", "a", "b"},
                                                                {"target", "remove", "a", "b"}}) {
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(
        cli::Run(args, {.verifier_target = "127.0.0.1:1", .timeout = absl::Seconds(1)}, out, err),
        kExitUsage);
    EXPECT_NE(err.str().find("usage:"), std::string::npos);
  }
}

}  // namespace
}  // namespace portcullis::cli
