// The site and target admin commands of the real `portcullis` CLI against the real verifier, and
// what they change for senders going through the gateway.
#include <boost/json.hpp>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

// Proto3 JSON writes 64-bit integers as strings.
long long Int64(const json::value& value) {
  return value.is_string() ? std::stoll(std::string(value.as_string()))
                           : value.to_number<long long>();
}

class AdminCliTest : public StackTest {
 protected:
  testing::CommandResult Cli(std::vector<std::string> args) {
    args = stack_->CliArgs(std::move(args));
    return testing::RunCommand(PORTCULLIS_CLI_BINARY, args);
  }
};

TEST_F(AdminCliTest, SitesAndTargetsDecideWhatIsReceived) {
  const std::string alice = "https://alice.example/reply";
  EXPECT_EQ(stack_->PostWebmention(alice, "https://blog.example/posts/1").status, 400);

  testing::CommandResult result = Cli({"site", "add", "Blog.Example"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(json::parse(result.output).at("site").at("domain").as_string(), "blog.example");
  EXPECT_TRUE(json::parse(result.output).at("created").as_bool());
  result = Cli({"site", "add", "blog.example"});  // Again: idempotent.
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_FALSE(json::parse(result.output).at("created").as_bool());
  EXPECT_EQ(Cli({"site", "add", "https://blog.example/"}).exit_code, 1);

  // Known site, unknown resource.
  testing::HttpResult answer = stack_->PostWebmention(alice, "https://blog.example/posts/1");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(json::parse(answer.body).at("error").as_string(), "target_not_found");

  const std::string file = absl::StrCat(::testing::TempDir(), "/targets-", getpid(), ".txt");
  std::ofstream(file) << "# the blog\n"
                         "https://blog.example/about\n"
                         "\n"
                         "  https://blog.example/posts/*  \n"
                         "https://blog.example/about#team\n";
  result = Cli({"target", "import", file});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(Int64(json::parse(result.output).at("added")), 2);
  EXPECT_EQ(Int64(json::parse(result.output).at("already_present")), 1);

  EXPECT_EQ(stack_->PostWebmention(alice, "https://blog.example/posts/1").status, 202);
  EXPECT_EQ(stack_->PostWebmention(alice, "https://blog.example/about").status, 202);

  result = Cli({"target", "list", "blog.example"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const json::array targets = json::parse(result.output).at("targets").as_array();
  ASSERT_EQ(targets.size(), 2u) << result.output;
  EXPECT_EQ(targets[0].at("url").as_string(), "https://blog.example/about");
  EXPECT_EQ(targets[0].at("kind").as_string(), "TARGET_KIND_EXACT");
  EXPECT_EQ(targets[1].at("url").as_string(), "https://blog.example/posts/");
  EXPECT_EQ(targets[1].at("kind").as_string(), "TARGET_KIND_PREFIX");

  result = Cli({"site", "list"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(Int64(json::parse(result.output).at("sites").as_array().at(0).at("target_count")), 2);

  result = Cli({"target", "remove", "https://blog.example/posts/*"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(stack_->PostWebmention(alice, "https://blog.example/posts/2").status, 400);
  EXPECT_EQ(Cli({"target", "remove", "https://blog.example/posts/*"}).exit_code, 1);

  result = Cli({"target", "add", "https://blog.example/posts/*"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(stack_->PostWebmention(alice, "https://blog.example/posts/2").status, 202);

  result = Cli({"site", "remove", "blog.example"});
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(Int64(json::parse(result.output).at("removed_targets")), 2);
  answer = stack_->PostWebmention(alice, "https://blog.example/posts/3");
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(json::parse(answer.body).at("error").as_string(), "target_not_supported");
  // Mentions received before stay.
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 3);
}

TEST_F(AdminCliTest, ImportIsAllOrNothingAndNamesTheBadLine) {
  ASSERT_EQ(Cli({"site", "add", "blog.example"}).exit_code, 0);
  const std::string file = absl::StrCat(::testing::TempDir(), "/bad-targets-", getpid(), ".txt");
  std::ofstream(file) << "https://blog.example/a\n"
                         "# comment\n"
                         "https://elsewhere.example/b\n";
  testing::CommandResult result = Cli({"target", "import", file});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM targets"), 0);

  std::ofstream(file) << "https://blog.example/a\n"
                         "ftp://blog.example/b\n";
  result = Cli({"target", "import", file});
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM targets"), 0);
  EXPECT_EQ(Cli({"target", "import", "/nonexistent/targets.txt"}).exit_code, 1);
}

}  // namespace
}  // namespace portcullis::integration
