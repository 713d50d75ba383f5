// `portcullis site set`, `review …` and `rule …` (issue 16) against an in-process fake verifier:
// which request each spelling sends, the JSON printed, and usage errors that send nothing. The
// commands against the real verifier: tests/integration/moderation_test.cc.
#include "tools/portcullis/src/moderation_commands.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tests/tools/portcullis/fake_verifier.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace v1 = verifier::v1;

// Records the moderation requests; answers with two pages of the queue.
class FakeModerationVerifier final : public v1::Verifier::Service {
 public:
  grpc::Status SetSiteSettings(grpc::ServerContext*, const v1::SetSiteSettingsRequest* request,
                               v1::SetSiteSettingsResponse* response) override {
    last_settings = *request;
    response->mutable_site()->set_domain(request->domain());
    response->mutable_site()->set_moderation(request->moderation());
    return grpc::Status::OK;
  }
  grpc::Status ListReviewQueue(grpc::ServerContext*, const v1::ListReviewQueueRequest* request,
                               v1::ListReviewQueueResponse* response) override {
    queue_requests.push_back(*request);
    v1::Mention* mention = response->add_mentions();
    mention->set_mention_id(request->page_token().empty() ? "m-1" : "m-2");
    mention->set_review(request->state());
    if (request->page_token().empty()) {
      response->set_next_page_token("page-2");
    }
    return grpc::Status::OK;
  }
  grpc::Status ReviewMention(grpc::ServerContext*, const v1::ReviewMentionRequest* request,
                             v1::ReviewMentionResponse* response) override {
    last_review = *request;
    response->mutable_mention()->set_mention_id(request->mention_id());
    return grpc::Status::OK;
  }
  grpc::Status AddApprovalRule(grpc::ServerContext*, const v1::AddApprovalRuleRequest* request,
                               v1::AddApprovalRuleResponse* response) override {
    last_rule = *request;
    if (request->rule().value() == "https://brid.gy/") {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "brid.gy relays many people's posts");
    }
    *response->mutable_rule() = request->rule();
    response->set_reach(3);
    return grpc::Status::OK;
  }
  grpc::Status RemoveApprovalRule(grpc::ServerContext*,
                                  const v1::RemoveApprovalRuleRequest* request,
                                  v1::RemoveApprovalRuleResponse* response) override {
    response->mutable_rule()->set_rule_id(request->rule_id());
    return grpc::Status::OK;
  }

  v1::SetSiteSettingsRequest last_settings;
  std::vector<v1::ListReviewQueueRequest> queue_requests;
  v1::ReviewMentionRequest last_review;
  v1::AddApprovalRuleRequest last_rule;
};

class ModerationCommandsTest : public ::testing::Test {
 protected:
  int Run(const std::vector<std::string>& args, CliOptions options = {}) {
    out_.str("");
    err_.str("");
    options.verifier_target = server_.target();
    options.timeout = absl::Seconds(5);
    options.token = kTestToken;
    return cli::Run(args, options, out_, err_);
  }

  FakeModerationVerifier fake_;
  InProcessServer server_{&fake_};
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(ModerationCommandsTest, SiteSetSendsThePolicy) {
  CliOptions options;
  options.moderation = "first-time-authors";
  ASSERT_EQ(Run({"site", "set", "bob.example"}, options), 0) << err_.str();
  EXPECT_EQ(fake_.last_settings.domain(), "bob.example");
  EXPECT_EQ(fake_.last_settings.moderation(), v1::MODERATION_FIRST_TIME_AUTHORS);
  EXPECT_NE(out_.str().find("\"moderation\": \"MODERATION_FIRST_TIME_AUTHORS\""),
            std::string::npos)
      << out_.str();
}

// Issue 17: --avatar-proxy alone sends no moderation (the verifier leaves it as it is).
TEST_F(ModerationCommandsTest, SiteSetSendsOnlyTheGivenSettings) {
  CliOptions options;
  options.avatar_proxy = "on";
  ASSERT_EQ(Run({"site", "set", "bob.example"}, options), 0) << err_.str();
  EXPECT_EQ(fake_.last_settings.moderation(), v1::MODERATION_UNSPECIFIED);
  ASSERT_TRUE(fake_.last_settings.has_avatar_proxy());
  EXPECT_TRUE(fake_.last_settings.avatar_proxy());
  options.avatar_proxy = "maybe";
  EXPECT_NE(Run({"site", "set", "bob.example"}, options), 0);
  EXPECT_NE(err_.str().find("--avatar-proxy is on or off"), std::string::npos) << err_.str();
  EXPECT_NE(Run({"site", "set", "bob.example"}, CliOptions{}), 0);
}

TEST_F(ModerationCommandsTest, ReviewListPrintsEveryPageAsOneMentionsArray) {
  CliOptions options;
  options.list_site = "bob.example";
  options.list_state = "hidden";
  ASSERT_EQ(Run({"review", "list"}, options), 0) << err_.str();
  ASSERT_EQ(fake_.queue_requests.size(), 2u);
  EXPECT_EQ(fake_.queue_requests[0].site(), "bob.example");
  EXPECT_EQ(fake_.queue_requests[0].state(), v1::REVIEW_STATE_HIDDEN);
  EXPECT_EQ(fake_.queue_requests[1].page_token(), "page-2");
  EXPECT_NE(out_.str().find("\"mentions\""), std::string::npos);
  EXPECT_NE(out_.str().find("\"mention_id\": \"m-1\""), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("\"mention_id\": \"m-2\""), std::string::npos);
  EXPECT_NE(out_.str().find("\"review\": \"REVIEW_STATE_HIDDEN\""), std::string::npos);
}

TEST_F(ModerationCommandsTest, ReviewVerbsSendTheActionAndTheNote) {
  CliOptions options;
  options.review_note = "takedown request";
  ASSERT_EQ(Run({"review", "hide", "m-9"}, options), 0) << err_.str();
  EXPECT_EQ(fake_.last_review.mention_id(), "m-9");
  EXPECT_EQ(fake_.last_review.action(), v1::REVIEW_ACTION_HIDE);
  EXPECT_EQ(fake_.last_review.note(), "takedown request");
  for (const auto& [verb, action] : std::vector<std::pair<std::string, v1::ReviewAction>>{
           {"approve", v1::REVIEW_ACTION_APPROVE},
           {"reject", v1::REVIEW_ACTION_REJECT},
           {"unhide", v1::REVIEW_ACTION_UNHIDE}}) {
    ASSERT_EQ(Run({"review", verb, "m-9"}), 0) << err_.str();
    EXPECT_EQ(fake_.last_review.action(), action) << verb;
  }
}

TEST_F(ModerationCommandsTest, RuleAddSendsOneKindAndDryRunAndReportsRefusals) {
  CliOptions options;
  options.list_site = "bob.example";
  options.rule_source_prefix = "https://alice.example/notes/";
  options.dry_run = true;
  ASSERT_EQ(Run({"rule", "add"}, options), 0) << err_.str();
  EXPECT_EQ(fake_.last_rule.rule().kind(), v1::APPROVAL_RULE_KIND_SOURCE_PREFIX);
  EXPECT_EQ(fake_.last_rule.rule().site(), "bob.example");
  EXPECT_TRUE(fake_.last_rule.dry_run());
  EXPECT_NE(out_.str().find("\"reach\": \"3\""), std::string::npos) << out_.str();

  options.rule_source_prefix = "https://brid.gy/";
  options.dry_run = false;
  EXPECT_EQ(Run({"rule", "add"}, options), kExitFailed);
  EXPECT_NE(err_.str().find("relays many people"), std::string::npos) << err_.str();

  ASSERT_EQ(Run({"rule", "remove", "r-1"}), 0) << err_.str();
  EXPECT_NE(out_.str().find("\"rule_id\": \"r-1\""), std::string::npos);
}

TEST_F(ModerationCommandsTest, UsageErrorsSendNothingAndExit2) {
  CliOptions both;
  both.list_site = "bob.example";
  both.rule_author_url = "https://a.example/";
  both.rule_source_prefix = "https://a.example/x/";
  CliOptions bad_state;
  bad_state.list_site = "bob.example";
  bad_state.list_state = "pending";
  CliOptions bad_policy;
  bad_policy.moderation = "strict";
  const std::vector<std::pair<std::vector<std::string>, CliOptions>> cases = {
      {{"review"}, {}},
      {{"review", "list"}, {}},                 // no --site
      {{"review", "list"}, bad_state},
      {{"review", "approve"}, {}},              // no id
      {{"review", "delete", "m-1"}, {}},
      {{"rule", "add"}, both},
      {{"rule", "list"}, {}},                   // no --site
      {{"rule", "remove"}, {}},
      {{"site", "set", "bob.example"}, bad_policy},
      {{"site", "set"}, {}},
  };
  for (const auto& [args, options] : cases) {
    EXPECT_EQ(Run(args, options), kExitUsage) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_NE(err_.str().find("usage:"), std::string::npos);
  }
  EXPECT_TRUE(fake_.queue_requests.empty());
  EXPECT_EQ(fake_.last_rule.rule().value(), "");
}

}  // namespace
}  // namespace portcullis::cli
