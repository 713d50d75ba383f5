// The clients of the verifier and their API tokens, with the real binaries: a gateway whose
// token the verifier refuses, the CLI without a token, and a token made, used and revoked with
// the CLI.
#include <boost/json.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/status/status_mapping.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/support/temp_path.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

constexpr char kTarget[] = "https://bob.example/post";
// A well-formed token that no verifier knows.
constexpr char kUnknownToken[] =
    "pct_00000000000000000000000000000000000000000000000000000000deadbeef";

class AuthClientsTest : public StackTest {
 protected:
  AuthClientsTest() { start_stack_ = false; }

  std::string WriteFile(const std::string& name, const std::string& contents) {
    const std::string path = portcullis::testing::PrivateTempPath("auth-clients-" + name);
    std::ofstream(path, std::ios::trunc) << contents;
    return path;
  }

  // The CLI with no token in its environment, whatever the developer's shell holds; stderr goes
  // to `stderr_path` when given (else into the result with stdout).
  testing::CommandResult Cli(const std::vector<std::string>& args,
                             const std::string& stderr_path = "") {
    std::vector<std::string> command = {"-u", "PORTCULLIS_TOKEN", "-u", "PORTCULLIS_TOKEN_FILE"};
    if (stderr_path.empty()) {
      command.push_back(PORTCULLIS_CLI_BINARY);
    } else {
      command.insert(command.end(),
                     {"sh", "-c", absl::StrCat("exec \"$0\" \"$@\" 2>", stderr_path),
                      PORTCULLIS_CLI_BINARY});
    }
    command.insert(command.end(), args.begin(), args.end());
    return testing::RunCommand("/usr/bin/env", command);
  }

  std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

TEST_F(AuthClientsTest, GatewayWithARefusedTokenIsNotReadyAndAsksSendersToComeBack) {
  ASSERT_TRUE(stack_->StartVerifier().ok());
  ASSERT_TRUE(stack_->ServeTarget(kTarget).ok());
  ASSERT_TRUE(stack_
                  ->StartGateway({absl::StrCat("--verifier_token_file=",
                                               WriteFile("wrong.token", kUnknownToken))})
                  .ok());
  // The verifier is up and SERVING; only the token is wrong. /readyz answers 503 before the first
  // readiness check too, so first see that check run and fail: the gateway logs its first result
  // either way.
  const absl::Time checked_by = absl::Now() + absl::Seconds(20);
  while (!absl::StrContains(stack_->gateway().Log(), "verifier is not serving (") &&
         absl::Now() < checked_by) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(absl::StrContains(stack_->gateway().Log(), "verifier is not serving ("))
      << "the first readiness check never reported: " << stack_->gateway().Log();
  EXPECT_FALSE(absl::StrContains(stack_->gateway().Log(), "verifier is serving: ready"))
      << stack_->gateway().Log();
  const testing::HttpResult readyz = stack_->Get("/readyz");
  EXPECT_EQ(readyz.status, 503) << readyz.body;

  const testing::HttpResult posted =
      stack_->PostWebmention("https://alice.example/reply", kTarget);
  // Our misconfiguration, not the sender's: 503 + Retry-After, so the sender comes back.
  EXPECT_EQ(posted.status, 503) << posted.body;
  EXPECT_FALSE(posted.Header("retry-after").empty()) << "503 without Retry-After";
  for (const char* secret : {"pct_", "Bearer", "authorization", "deadbeef", "127.0.0.1"}) {
    EXPECT_FALSE(absl::StrContains(posted.body, secret)) << secret << " in " << posted.body;
  }
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 0);
  const testing::HttpResult metrics =
      testing::SendHttp(stack_->admin_port(), "GET", "/metrics", "", "", absl::Seconds(5));
  EXPECT_EQ(metrics.status, 200);
  EXPECT_FALSE(absl::StrContains(metrics.body, "pct_")) << "no token in /metrics";
  EXPECT_FALSE(absl::StrContains(stack_->gateway().Log(), kUnknownToken));
  EXPECT_FALSE(absl::StrContains(stack_->verifier().Log(), kUnknownToken));
}

TEST_F(AuthClientsTest, GatewayRefusesToStartWithoutAUsableTokenFile) {
  for (const std::string& flag :
       {std::string("--verifier_token_file="),
        absl::StrCat("--verifier_token_file=", ::testing::TempDir(), "/auth-clients-missing"),
        absl::StrCat("--verifier_token_file=", WriteFile("empty.token", "\n"))}) {
    ASSERT_TRUE(stack_->StartGateway({flag}).ok());
    const absl::StatusOr<int> exit_code = stack_->gateway().Wait(absl::Seconds(10));
    ASSERT_TRUE(exit_code.ok()) << flag << ": still running";
    EXPECT_EQ(*exit_code, 2) << flag;
    EXPECT_TRUE(absl::StrContains(stack_->gateway().Log(), "--verifier_token_file"))
        << stack_->gateway().Log();
  }
}

TEST_F(AuthClientsTest, CliWithoutATokenSaysHowToGiveOne) {
  ASSERT_TRUE(stack_->StartAll().ok());
  const testing::CommandResult result =
      Cli({absl::StrCat("--verifier=", stack_->grpc_target()), "site", "list"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(result.output, "error: no API token")) << result.output;
  EXPECT_TRUE(absl::StrContains(result.output, "PORTCULLIS_TOKEN_FILE")) << result.output;

  const testing::CommandResult refused =
      Cli({absl::StrCat("--verifier=", stack_->grpc_target()),
           absl::StrCat("--token_file=", WriteFile("unknown.token", kUnknownToken)), "site",
           "list"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(absl::StrContains(refused.output, "UNAUTHENTICATED")) << refused.output;
  EXPECT_FALSE(absl::StrContains(refused.output, kUnknownToken)) << refused.output;
}

TEST_F(AuthClientsTest, ATokenMadeWithTheCliWorksUntilRevoked) {
  ASSERT_TRUE(stack_->StartAll().ok());
  ASSERT_TRUE(stack_->ServeTarget(kTarget).ok());
  const std::string err_path = portcullis::testing::PrivateTempPath("auth-clients-create.err");
  const testing::CommandResult created = Cli(
      stack_->CliArgs({"token", "create", "--scopes=read", "--name=feed-reader"}), err_path);
  ASSERT_EQ(created.exit_code, 0) << created.output << Read(err_path);
  const std::string token(absl::StripSuffix(created.output, "\n"));
  ASSERT_TRUE(absl::StartsWith(token, "pct_")) << created.output;
  ASSERT_EQ(token.find('\n'), std::string::npos) << "the token alone on stdout";
  EXPECT_FALSE(absl::StrContains(Read(err_path), token));

  // The id, from the list (never the token or its hash).
  const testing::CommandResult listed = Cli(stack_->CliArgs({"token", "list"}));
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_FALSE(absl::StrContains(listed.output, token));
  std::string id;
  const json::value tokens = json::parse(listed.output);
  for (const json::value& entry : tokens.at("tokens").as_array()) {
    if (entry.at("name").as_string() == "feed-reader") {
      id = std::string(entry.at("id").as_string());
    }
  }
  ASSERT_FALSE(id.empty()) << listed.output;
  EXPECT_TRUE(absl::StrContains(Read(err_path), id)) << Read(err_path);

  const std::string token_file = WriteFile("reader.token", token + "\n");
  const std::vector<std::string> read_mentions = {
      absl::StrCat("--verifier=", stack_->grpc_target()),
      absl::StrCat("--token_file=", token_file), "mention", "list", "--site=bob.example"};
  const testing::CommandResult read = Cli(read_mentions);
  EXPECT_EQ(read.exit_code, 0) << read.output;
  // Its scope is read only.
  const testing::CommandResult admin = Cli({absl::StrCat("--verifier=", stack_->grpc_target()),
                                            absl::StrCat("--token_file=", token_file), "site",
                                            "list"});
  EXPECT_EQ(admin.exit_code, 1) << admin.output;
  EXPECT_TRUE(absl::StrContains(admin.output, "PERMISSION_DENIED")) << admin.output;

  const testing::CommandResult revoked = Cli(stack_->CliArgs({"token", "revoke", id}));
  ASSERT_EQ(revoked.exit_code, 0) << revoked.output;
  // Refused within the refresh interval (the Stack's verifier: 1 s; this pod at once).
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  testing::CommandResult after = Cli(read_mentions);
  while (after.exit_code == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(200));
    after = Cli(read_mentions);
  }
  EXPECT_EQ(after.exit_code, 1) << after.output;
  EXPECT_TRUE(absl::StrContains(after.output, "UNAUTHENTICATED")) << after.output;
  // The gateway's own token is unaffected.
  EXPECT_EQ(stack_->PostWebmention("https://alice.example/reply", kTarget).status, 202);
}

}  // namespace
}  // namespace portcullis::integration
