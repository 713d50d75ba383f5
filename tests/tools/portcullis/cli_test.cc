#include "tools/portcullis/src/cli.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/support/temp_path.h"
#include "tests/tools/portcullis/fake_verifier.h"

namespace portcullis::cli {
namespace {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

CliResult RunCli(const std::vector<std::string>& args, const std::string& target,
                 CliOptions options = {.token = kTestToken}) {
  std::ostringstream out;
  std::ostringstream err;
  options.verifier_target = target;
  options.timeout = absl::Seconds(5);
  const int code = Run(args, options, out, err);
  return {code, out.str(), err.str()};
}

TEST(CliTest, UsageErrorsSendNothingAndExit2) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"mention"}, {"mentions", "get", "x"}, {"mention", "delete", "x"},
           {"mention", "get"}, {"mention", "submit", "only-source"}}) {
    const CliResult result = RunCli(args, "127.0.0.1:1");
    EXPECT_EQ(result.code, kExitUsage);
    EXPECT_NE(result.err.find("usage:"), std::string::npos);
  }
}

TEST(CliTest, SubmitAndGetAgainstAVerifier) {
  FakeVerifier service;
  InProcessServer server(&service);
  const CliResult submitted =
      RunCli({"mention", "submit", "https://a.example/post", "https://b.example/"},
             server.target());
  EXPECT_EQ(submitted.code, kExitOk) << submitted.err;
  EXPECT_NE(submitted.out.find("\"DECISION_ACCEPTED\""), std::string::npos) << submitted.out;

  const CliResult got =
      RunCli({"mention", "get", "5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001"}, server.target());
  EXPECT_EQ(got.code, kExitOk) << got.err;
  EXPECT_NE(got.out.find("\"MENTION_STATE_PENDING\""), std::string::npos) << got.out;
}

TEST(CliTest, UnreachableVerifierFailsWithOneLine) {
  const CliResult result = RunCli({"mention", "get", "x"}, "127.0.0.1:1");
  EXPECT_EQ(result.code, kExitFailed);
  EXPECT_EQ(result.err.rfind("error: UNAVAILABLE: ", 0), 0u) << result.err;
}

TEST(CliTest, EveryCallCarriesTheToken) {
  FakeVerifier service;
  InProcessServer server(&service);
  const CliResult got =
      RunCli({"mention", "get", "5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001"}, server.target());
  EXPECT_EQ(got.code, kExitOk) << got.err;
  EXPECT_EQ(service.last_authorization, std::string("Bearer ") + kTestToken);
}

TEST(CliTest, WithoutATokenNothingIsSentAndTheErrorSaysHowToGiveOne) {
  FakeVerifier service;
  InProcessServer server(&service);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"mention", "get", "5b6f0e0c-6f6e-4c57-9d2b-6a1f1f0a0001"},
           {"site", "list"},
           {"block", "list", "global"},
           {"publisher", "list"},
           {"url", "check", "https://a.example/"},
           {"token", "list"}}) {
    const CliResult result = RunCli(args, server.target(), CliOptions{});
    EXPECT_EQ(result.code, kExitUsage) << args[0];
    EXPECT_NE(result.err.find("error: no API token"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("PORTCULLIS_TOKEN_FILE"), std::string::npos) << result.err;
    EXPECT_TRUE(result.out.empty());
  }
  EXPECT_TRUE(service.last_authorization.empty()) << "no call was made";
}

TEST(CliTest, AnUnreadableTokenFileIsReportedInsteadOfCalling) {
  const CliResult result = RunCli({"site", "list"}, "127.0.0.1:1",
                                  {.token_error = "cannot read the token file /nope"});
  EXPECT_EQ(result.code, kExitUsage);
  EXPECT_EQ(result.err, "error: cannot read the token file /nope\n");
}

TEST(CliTest, ResolveTokenPrefersTheFlagThenTheVariableThenTheFile) {
  const std::string file = portcullis::testing::PrivateTempPath("cli-token");
  std::ofstream(file, std::ios::trunc) << "pct_from_file\n";
  EXPECT_EQ(*ResolveToken(file, "pct_from_env", ""), "pct_from_file");
  EXPECT_EQ(*ResolveToken("", " pct_from_env\n", file), "pct_from_env");
  EXPECT_EQ(*ResolveToken("", "", file), "pct_from_file");
  EXPECT_EQ(*ResolveToken("", "", ""), "");
  const absl::StatusOr<std::string> missing = ResolveToken("", "", file + "-missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find(file + "-missing"), std::string::npos);
}

TEST(CliTest, UnauthenticatedAnswerSaysWhereTheTokenCameFrom) {
  FakeVerifier service;
  InProcessServer server(&service);
  const CliResult refused = RunCli({"mention", "get", "unauthenticated"}, server.target());
  EXPECT_EQ(refused.code, kExitFailed);
  EXPECT_EQ(refused.err.rfind("error: UNAUTHENTICATED: ", 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("PORTCULLIS_TOKEN_FILE"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find(kTestToken), std::string::npos);

  const CliResult other = RunCli({"mention", "get", "x"}, server.target());
  EXPECT_EQ(other.err.find("API token"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace portcullis::cli
