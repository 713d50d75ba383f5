// Moderation and takedown end to end (issue 16): the real verifier and gateway, the real
// `portcullis` CLI, outcomes recorded through the real job store, and the public jf2 feed read
// over real HTTP. Moderation `off` is covered by mentions_feed_test.cc unchanged.
#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "grpcpp/client_context.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_job_store.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;
namespace v1 = verifier::v1;

class ModerationStackTest : public StackTest {
 protected:
  std::string Submit(const std::string& source, const std::string& target) {
    const testing::HttpResult accepted = stack_->PostWebmention(source, target);
    EXPECT_EQ(accepted.status, 202) << accepted.body << accepted.error;
    return accepted.status == 202
               ? std::string(json::parse(accepted.body).at("mention_id").as_string())
               : "";
  }

  // Claims every queued job and records a reply by `author_url` saying `text`, as a worker would.
  void VerifyAll(const std::string& author_url, const std::string& text) {
    auto pool = verifier::store::PgConnectionPool::Create(
        {database_->connection_string(), 1, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    verifier::store::PgJobStore jobs(**pool);
    auto claimed = jobs.Claim("moderation-test", 100, absl::Seconds(30));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    verifier::store::JobResult result;
    result.kind = verifier::store::JobResult::Kind::kVerified;
    result.content.type = "reply";
    result.content.author_name = "Someone";
    result.content.author_url = author_url;
    result.content.content_text = text;
    result.content.content_html = absl::StrCat("<p>", text, "</p>");
    for (const verifier::store::JobRecord& job : *claimed) {
      ASSERT_TRUE(jobs.Finish(job.job_id, "moderation-test", result).ok());
    }
  }

  // The wm-ids of the public feed of bob.example, and the body (for what must not be in it).
  std::set<std::string> Feed(std::string* body = nullptr) {
    const testing::HttpResult feed = testing::SendHttp(
        stack_->http_port(), "GET", "/mentions?site=bob.example", "", "", absl::Seconds(10), {});
    EXPECT_EQ(feed.status, 200) << feed.body << feed.error;
    std::set<std::string> ids;
    if (feed.status != 200) {
      return ids;
    }
    const json::value parsed = json::parse(feed.body);
    for (const json::value& entry : parsed.at("children").as_array()) {
      ids.insert(std::string(entry.at("wm-id").as_string()));
    }
    if (body != nullptr) {
      *body = feed.body;
    }
    return ids;
  }

  testing::CommandResult Cli(std::vector<std::string> args) {
    return testing::RunCommand(PORTCULLIS_CLI_BINARY, stack_->CliArgs(std::move(args)));
  }

  json::value CliJson(std::vector<std::string> args) {
    const testing::CommandResult result = Cli(args);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return result.exit_code == 0 ? json::parse(result.output) : json::value();
  }
};

using Ids = std::set<std::string>;

TEST_F(ModerationStackTest, BlocksAndHideTakeMentionsDownAtOnceAndBackWhenUndone) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  const std::string spam = Submit("https://x.spam.example/1", "https://bob.example/post");
  VerifyAll("https://someone.example/", "buy pills now");
  const std::string good = Submit("https://alice.example/reply", "https://bob.example/post");
  VerifyAll("https://alice.example/", "kind words");
  ASSERT_EQ(Feed(), (Ids{spam, good}));

  // A global domain block: the VERIFIED mention leaves the feed on the next read, no re-send.
  ASSERT_EQ(Cli({"block", "add", "global", "domain", "spam.example"}).exit_code, 0);
  std::string body;
  EXPECT_EQ(Feed(&body), (Ids{good}));
  // A site's prefix block takes the other down too; removing both brings both back.
  ASSERT_EQ(Cli({"block", "add", "bob.example", "prefix", "https://alice.example/"}).exit_code, 0);
  EXPECT_EQ(Feed(), Ids{});
  ASSERT_EQ(Cli({"block", "remove", "global", "domain", "spam.example"}).exit_code, 0);
  ASSERT_EQ(Cli({"block", "remove", "bob.example", "prefix", "https://alice.example/"}).exit_code,
            0);
  EXPECT_EQ(Feed(), (Ids{spam, good}));

  // Hidden by hand: out of the feed at once, and its content out of the sender's status page.
  json::value hidden = CliJson({"review", "hide", spam, "--note=scam"});
  EXPECT_EQ(hidden.at("mention").at("review").as_string(), "REVIEW_STATE_HIDDEN");
  EXPECT_FALSE(hidden.at("mention").at("shown").as_bool());
  EXPECT_EQ(hidden.at("mention").at("review_note").as_string(), "scam");
  EXPECT_EQ(Feed(&body), (Ids{good}));
  EXPECT_EQ(body.find("pills"), std::string::npos);
  const testing::HttpResult status = testing::SendHttp(
      stack_->http_port(), "GET", absl::StrCat("/webmention/status/", spam), "", "",
      absl::Seconds(10), {{"Accept", "application/json"}});
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.body.find("Someone"), std::string::npos) << status.body;

  // A block added and removed while hidden does not bring it back; unhide does.
  ASSERT_EQ(Cli({"block", "add", "global", "domain", "spam.example"}).exit_code, 0);
  ASSERT_EQ(Cli({"block", "remove", "global", "domain", "spam.example"}).exit_code, 0);
  EXPECT_EQ(Feed(), (Ids{good}));
  EXPECT_EQ(CliJson({"review", "unhide", spam}).at("mention").at("review").as_string(),
            "REVIEW_STATE_UNREVIEWED");
  EXPECT_EQ(Feed(), (Ids{spam, good}));
}

TEST_F(ModerationStackTest, ModerationAllQueueApprovalsAndRulesThroughTheCli) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  json::value set = CliJson({"site", "set", "bob.example", "--moderation=all"});
  EXPECT_EQ(set.at("site").at("moderation").as_string(), "MODERATION_ALL");
  EXPECT_EQ(Cli({"site", "set", "bob.example", "--moderation=some"}).exit_code, 2);

  const std::string first = Submit("https://alice.example/notes/1", "https://bob.example/post");
  const std::string second = Submit("https://alice.example/notes/2", "https://bob.example/post");
  const std::string third = Submit("https://carol.example/3", "https://bob.example/post");
  VerifyAll("https://alice.example/", "hello");
  EXPECT_EQ(Feed(), Ids{}) << "nothing is shown before it is approved";

  // The queue: every VERIFIED mention, unreviewed.
  json::value queue = CliJson({"review", "list", "--site", "bob.example"});
  Ids queued;
  for (const json::value& mention : queue.at("mentions").as_array()) {
    EXPECT_EQ(mention.at("review").as_string(), "REVIEW_STATE_UNREVIEWED");
    queued.insert(std::string(mention.at("mention_id").as_string()));
  }
  EXPECT_EQ(queued, (Ids{first, second, third}));

  CliJson({"review", "approve", third, "--note=friend"});
  CliJson({"review", "reject", first});
  EXPECT_EQ(Feed(), (Ids{third}));
  json::value rejected = CliJson({"review", "list", "--site", "bob.example", "--state=rejected"});
  ASSERT_EQ(rejected.at("mentions").as_array().size(), 1u);
  EXPECT_EQ(rejected.at("mentions").as_array()[0].at("mention_id").as_string(), first);

  // A rule's reach is shown before it is added; a rejected mention is not in it.
  json::value dry = CliJson({"rule", "add", "--site", "bob.example", "--source-prefix",
                             "https://alice.example/notes/", "--dry-run"});
  EXPECT_EQ(dry.at("reach"), "1") << json::serialize(dry);
  EXPECT_TRUE(CliJson({"rule", "list", "--site", "bob.example"}).at("rules").as_array().empty());
  json::value added = CliJson({"rule", "add", "--site", "bob.example", "--source-prefix",
                               "https://alice.example/notes/"});
  EXPECT_TRUE(added.at("created").as_bool());
  EXPECT_EQ(Feed(), (Ids{second, third}));
  const std::string rule_id(added.at("rule").at("rule_id").as_string());
  ASSERT_EQ(CliJson({"rule", "list", "--site", "bob.example"}).at("rules").as_array().size(), 1u);

  // A relay's bare host is refused; one person's path on it is not.
  const testing::CommandResult relay =
      Cli({"rule", "add", "--site", "bob.example", "--source-prefix", "https://brid.gy/"});
  EXPECT_EQ(relay.exit_code, 1) << relay.output;
  EXPECT_NE(relay.output.find("relays many people"), std::string::npos) << relay.output;
  EXPECT_EQ(Cli({"rule", "add", "--site", "bob.example", "--author-url",
                 "https://twitter.com/alice", "--dry-run"})
                .exit_code,
            0);

  // Removing the rule takes back what it approved, not what a person approved.
  CliJson({"rule", "remove", rule_id});
  EXPECT_EQ(Feed(), (Ids{third}));
  EXPECT_EQ(Cli({"rule", "remove", rule_id}).exit_code, 1);
}

TEST_F(ModerationStackTest, OnlyReviewersListByReviewStateAndABoundTokenReviewsItsSitesOnly) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  ASSERT_TRUE(stack_->ServeTarget("https://carol.example/*").ok());
  const std::string id = Submit("https://alice.example/reply", "https://bob.example/post");
  VerifyAll("https://alice.example/", "hello");

  // The gateway's token (submit, read) reads the public side only.
  auto reader = v1::Verifier::NewStub(stack_->Channel(stack_->gateway_token()));
  v1::ListMentionsRequest by_review;
  by_review.set_domain("bob.example");
  by_review.set_review(v1::REVIEW_STATE_UNREVIEWED);
  v1::ListMentionsResponse unused;
  grpc::ClientContext context;
  EXPECT_EQ(reader->ListMentions(&context, by_review, &unused).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  absl::StatusOr<std::string> carol_reviewer =
      stack_->CreateToken("carol-reviewer", {"review"}, {"carol.example"});
  ASSERT_TRUE(carol_reviewer.ok()) << carol_reviewer.status();
  auto carol = v1::Verifier::NewStub(stack_->Channel(*carol_reviewer));
  v1::ReviewMentionRequest hide;
  hide.set_mention_id(id);
  hide.set_action(v1::REVIEW_ACTION_HIDE);
  v1::ReviewMentionResponse reviewed;
  grpc::ClientContext hide_context;
  EXPECT_EQ(carol->ReviewMention(&hide_context, hide, &reviewed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Feed(), (Ids{id})) << "nothing changed";

  absl::StatusOr<std::string> bob_reviewer =
      stack_->CreateToken("bob-reviewer", {"review"}, {"bob.example"});
  ASSERT_TRUE(bob_reviewer.ok()) << bob_reviewer.status();
  auto bob = v1::Verifier::NewStub(stack_->Channel(*bob_reviewer));
  grpc::ClientContext bob_context;
  const grpc::Status status = bob->ReviewMention(&bob_context, hide, &reviewed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Feed(), Ids{});
  // A review token cannot change the site's policy (an admin's call).
  v1::SetSiteSettingsRequest settings;
  settings.set_domain("bob.example");
  settings.set_moderation(v1::MODERATION_ALL);
  v1::SetSiteSettingsResponse unused_settings;
  grpc::ClientContext settings_context;
  EXPECT_EQ(bob->SetSiteSettings(&settings_context, settings, &unused_settings).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace portcullis::integration
