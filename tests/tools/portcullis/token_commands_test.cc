#include "tools/portcullis/src/token_commands.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/portcullis/fake_verifier.h"
#include "verifier-service/src/auth/api_token.h"
#include "verifier-service/src/auth/token_registry.h"

namespace portcullis::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class TokenCommandsTest : public ::testing::Test {
 protected:
  int Run(const std::vector<std::string>& args, CliOptions options = {}) {
    out_.str("");
    err_.str("");
    options.verifier_target = server_.target();
    options.timeout = absl::Seconds(5);
    if (options.token.empty()) options.token = kTestToken;
    return cli::Run(args, options, out_, err_);
  }

  FakeVerifier service_;
  InProcessServer server_{&service_};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(TokenCommandsTest, CreatePrintsTheTokenAloneOnStdoutAndTheIdOnStderr) {
  ASSERT_EQ(Run({"token", "create"}, {.token_name = "site-reader",
                                      .token_scopes = "read,submit",
                                      .token_sites = {"a.example,b.example", "c.example"}}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(), std::string(kTestToken) + "\n");
  EXPECT_THAT(err_.str(), HasSubstr("7d4c6b1e-0000-4000-8000-000000000001"));
  EXPECT_THAT(err_.str(), Not(HasSubstr(kTestToken)));
  EXPECT_EQ(service_.last_create.name(), "site-reader");
  EXPECT_THAT(service_.last_create.scopes(), ElementsAre("read", "submit"));
  EXPECT_THAT(service_.last_create.sites(), ElementsAre("a.example", "b.example", "c.example"));
}

TEST_F(TokenCommandsTest, CreateNeedsScopesAndReportsRefusals) {
  EXPECT_EQ(Run({"token", "create"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--scopes"));
  EXPECT_EQ(Run({"token", "create"}, {.token_scopes = "bad"}), kExitFailed);
  EXPECT_THAT(err_.str(), HasSubstr("INVALID_ARGUMENT"));
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(TokenCommandsTest, ListAndRevoke) {
  ASSERT_EQ(Run({"token", "list"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\"gateway\""));
  ASSERT_EQ(Run({"token", "revoke", "7d4c6b1e-0000-4000-8000-000000000001"}), kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("revoked_at"));
  EXPECT_EQ(Run({"token", "revoke", "nope"}), kExitFailed);
  EXPECT_THAT(err_.str(), HasSubstr("NOT_FOUND"));
  EXPECT_EQ(Run({"token", "revoke"}), kExitUsage);
}

TEST_F(TokenCommandsTest, NewIsOfflineAndItsLineIsAValidTokensFileLine) {
  CliOptions options{.verifier_target = "127.0.0.1:1",
                     .token_name = "admin",
                     .token_scopes = "admin,read,submit,fetch",
                     .token_sites = {"Blog.Example"}};
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(cli::Run({"token", "new"}, options, out, err), kExitOk) << err.str();
  const std::string token(absl::StripSuffix(out.str(), "\n"));
  EXPECT_TRUE(absl::StartsWith(token, "pct_")) << token;
  EXPECT_EQ(token.size(), 4u + 64u);
  EXPECT_THAT(err.str(), Not(HasSubstr(token)));

  absl::StatusOr<std::vector<verifier::auth::ActiveToken>> parsed =
      verifier::auth::ParseStaticTokens(err.str());
  ASSERT_TRUE(parsed.ok()) << parsed.status() << ": " << err.str();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].token_hash, verifier::auth::HashToken(token));
  EXPECT_EQ((*parsed)[0].caller.name, "admin");
  EXPECT_THAT((*parsed)[0].caller.sites, ElementsAre("blog.example"));
  EXPECT_TRUE(verifier::auth::HasScope((*parsed)[0].caller.scopes, verifier::auth::Scope::kAdmin));
  EXPECT_TRUE(verifier::auth::HasScope((*parsed)[0].caller.scopes, verifier::auth::Scope::kFetch));

  std::ostringstream out2;
  ASSERT_EQ(cli::Run({"token", "new"}, options, out2, err), kExitOk);
  EXPECT_NE(out2.str(), out.str()) << "every token is new";
}

TEST_F(TokenCommandsTest, NewRefusesWhatTheVerifierWouldRefuse) {
  for (const CliOptions& options :
       {CliOptions{.token_scopes = "read"},
        CliOptions{.token_name = "two words", .token_scopes = "read"},
        CliOptions{.token_name = "x", .token_scopes = "read,write"},
        CliOptions{.token_name = "x", .token_scopes = "read", .token_sites = {"https://a.example/"}}}) {
    std::ostringstream out;
    std::ostringstream err;
    EXPECT_EQ(cli::Run({"token", "new"}, options, out, err), kExitUsage) << options.token_name;
    EXPECT_TRUE(out.str().empty());
  }
}

}  // namespace
}  // namespace portcullis::cli
