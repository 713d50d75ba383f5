// Erasure end to end (issue 17): mentions verified through the real gateway and verifier (workers
// fetching from a loopback page origin that counts requests), erased with the real `portcullis
// erase` CLI. Afterwards the feed, the status page, GetMention and the database hold nothing of
// the person; a re-send is answered 202 and recorded FAILED `erased` without a fetch; `--undo`
// restores normal handling; a site-bound token cannot erase another site's mention.

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "tests/support/child_process.h"
#include "tools/portcullis/src/page_origin.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;
namespace v1 = portcullis::verifier::v1;

constexpr char kTarget[] = "https://bob.example/post-1";
constexpr absl::Duration kWait = absl::Seconds(20);

// A reply to kTarget by `author` (name), whose h-card links to `author_url`.
std::string ReplyBy(const std::string& author, const std::string& author_url) {
  return absl::StrCat(
      "<!doctype html><html><body><article class=\"h-entry\">"
      "<a class=\"p-author h-card\" href=\"",
      author_url, "\">", author,
      "</a> "
      "<a class=\"u-in-reply-to\" href=\"",
      kTarget,
      "\">the post</a>"
      "<div class=\"e-content\">Greetings from ",
      author, "</div></article></body></html>");
}

class ErasureTest : public StackTest {
 protected:
  ErasureTest() { start_stack_ = false; }

  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    absl::StatusOr<std::unique_ptr<cli::PageOrigin>> origin =
        cli::PageOrigin::Start("127.0.0.1", 0);
    ASSERT_TRUE(origin.ok()) << origin.status();
    origin_ = *std::move(origin);
    alice_url_ = origin_->origin() + "/alice";
    for (const char* path : {"/alice/1", "/alice/2"}) {
      origin_->SetRoute(path, cli::PageResponse::Html(ReplyBy("Alice Erasable", alice_url_)));
    }
    for (const char* path : {"/bob/1", "/bob/2"}) {
      origin_->SetRoute(path,
                        cli::PageResponse::Html(ReplyBy("Bob Stays", origin_->origin() + "/bob")));
    }
    // A token bound to another site, with every scope (made before the verifier starts).
    carol_admin_ = stack_->AddStaticToken("carol-admin", "submit,read,admin", {"carol.example"});
    ASSERT_TRUE(stack_
                    ->StartVerifier({"--workers=2", "--egress_allow_cidrs=127.0.0.1/32",
                                     absl::StrCat("--fetch_allowed_ports=", origin_->port()),
                                     "--fetch_timeout=3s", "--worker_poll_interval=1s"})
                    .ok());
    ASSERT_TRUE(stack_->StartGateway().ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
    ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
    ASSERT_TRUE(stack_->ServeTarget("https://carol.example/*").ok());
    stub_ = v1::Verifier::NewStub(stack_->AdminChannel());
  }

  void TearDown() override {
    stub_.reset();
    StackTest::TearDown();
    origin_.reset();
  }

  std::string Submit(const std::string& path) {
    const testing::HttpResult result = stack_->PostWebmention(origin_->origin() + path, kTarget);
    EXPECT_EQ(result.status, 202) << result.body << result.error;
    if (result.status != 202) {
      return "";
    }
    return std::string(json::parse(result.body).at("mention_id").as_string());
  }

  grpc::Status Get(v1::Verifier::Stub& stub, const std::string& id, v1::Mention* mention) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    v1::GetMentionRequest request;
    request.set_mention_id(id);
    v1::GetMentionResponse response;
    const grpc::Status status = stub.GetMention(&context, request, &response);
    *mention = response.mention();
    return status;
  }

  v1::Mention WaitForState(const std::string& id, v1::MentionState state) {
    const absl::Time deadline = absl::Now() + kWait;
    v1::Mention mention;
    Get(*stub_, id, &mention);
    while (mention.state() != state && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
      Get(*stub_, id, &mention);
    }
    EXPECT_EQ(mention.state(), state) << mention.DebugString();
    return mention;
  }

  // `portcullis erase ARGS...`: its exit code and JSON answer.
  testing::CommandResult Erase(std::vector<std::string> args) {
    args.insert(args.begin(), "erase");
    return testing::RunCommand(PORTCULLIS_CLI_BINARY, stack_->CliArgs(std::move(args)));
  }

  std::string Feed() {
    const testing::HttpResult feed =
        stack_->Get(absl::StrCat("/mentions?target=", testing::FormEncode(kTarget)));
    EXPECT_EQ(feed.status, 200) << feed.body;
    return feed.body;
  }

  std::unique_ptr<cli::PageOrigin> origin_;
  std::unique_ptr<v1::Verifier::Stub> stub_;
  std::string alice_url_;
  std::string carol_admin_;
};

TEST_F(ErasureTest, ErasedAuthorLeavesNothingAndIsNeverFetchedAgainUntilUndone) {
  const std::string alice_1 = Submit("/alice/1");
  const std::string alice_2 = Submit("/alice/2");
  const std::string bob_1 = Submit("/bob/1");
  WaitForState(alice_1, v1::MENTION_STATE_VERIFIED);
  WaitForState(alice_2, v1::MENTION_STATE_VERIFIED);
  const v1::Mention bob = WaitForState(bob_1, v1::MENTION_STATE_VERIFIED);
  ASSERT_NE(Feed().find("Alice Erasable"), std::string::npos) << "served before the erasure";
  ASSERT_EQ(QueryCount(*database_, absl::StrCat("SELECT count(*) FROM mentions WHERE author_url "
                                                "= '",
                                                alice_url_, "'")),
            2)
      << "the author URL as verification stored it";

  // The dry run prints what would go and changes nothing.
  const testing::CommandResult dry = Erase({"--author-url", alice_url_, "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  const json::value dry_json = json::parse(dry.output);
  EXPECT_EQ(dry_json.at("mentions").as_string(), "2") << dry.output;
  EXPECT_TRUE(dry_json.at("dry_run").as_bool());
  EXPECT_NE(dry.output.find(alice_1), std::string::npos);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 3);

  const testing::CommandResult erased = Erase({"--author-url", alice_url_});
  ASSERT_EQ(erased.exit_code, 0) << erased.output;
  EXPECT_EQ(json::parse(erased.output).at("mentions").as_string(), "2") << erased.output;

  // The feed, the status page, GetMention and the tables hold nothing of her.
  const std::string feed = Feed();
  EXPECT_EQ(feed.find("Alice"), std::string::npos) << feed;
  EXPECT_EQ(feed.find("/alice/"), std::string::npos) << feed;
  EXPECT_NE(feed.find("Bob Stays"), std::string::npos) << feed;
  EXPECT_EQ(stack_->Get(absl::StrCat("/webmention/status/", alice_1)).status, 404);
  v1::Mention gone;
  EXPECT_EQ(Get(*stub_, alice_1, &gone).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(QueryCount(*database_,
                       absl::StrCat("SELECT count(*) FROM mentions WHERE source LIKE '%/alice/%' "
                                    "OR author_url LIKE '%/alice%' OR author_name LIKE '%Alice%' "
                                    "OR content_text LIKE '%Alice%' OR content_html LIKE "
                                    "'%Alice%'")),
            0);
  EXPECT_EQ(QueryCount(*database_, absl::StrCat("SELECT count(*) FROM verification_jobs WHERE "
                                                "mention_id IN ('",
                                                alice_1, "', '", alice_2, "')")),
            0);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM erasures"), 2);

  // A re-send: 202 as always, recorded FAILED `erased` at once, and never fetched.
  const int fetches = origin_->requests("/alice/1");
  const std::string resent = Submit("/alice/1");
  ASSERT_FALSE(resent.empty());
  v1::Mention failed;
  ASSERT_TRUE(Get(*stub_, resent, &failed).ok());
  EXPECT_EQ(failed.state(), v1::MENTION_STATE_FAILED);
  EXPECT_EQ(failed.reason(), "erased");
  EXPECT_EQ(failed.author().name(), "") << failed.DebugString();
  // Checked after a marker that must happen: another source submitted after it is fetched and
  // verified, so the workers ran past the re-send.
  WaitForState(Submit("/bob/2"), v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(origin_->requests("/alice/1"), fetches) << "an erased source is never fetched";

  // --undo: the tombstones go, and the next re-send is verified as usual.
  const testing::CommandResult undone = Erase({"--undo", "--author-url", alice_url_});
  ASSERT_EQ(undone.exit_code, 0) << undone.output;
  EXPECT_EQ(json::parse(undone.output).at("tombstones").as_string(), "2") << undone.output;
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM erasures"), 0);
  WaitForState(Submit("/alice/1"), v1::MENTION_STATE_VERIFIED);
  EXPECT_GT(origin_->requests("/alice/1"), fetches);
}

TEST_F(ErasureTest, ASiteBoundTokenCannotEraseAnotherSitesMention) {
  const std::string bob_1 = Submit("/bob/1");
  WaitForState(bob_1, v1::MENTION_STATE_VERIFIED);
  auto carol = v1::Verifier::NewStub(stack_->Channel(carol_admin_));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  v1::EraseRequest request;
  request.set_mention_id(bob_1);
  v1::EraseResponse response;
  EXPECT_EQ(carol->Erase(&context, request, &response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Its own kind of erasure reaches its own site only: by source host, nothing of bob.example.
  grpc::ClientContext by_host;
  by_host.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  v1::EraseRequest host_request;
  host_request.set_source_host("127.0.0.1");
  ASSERT_TRUE(carol->Erase(&by_host, host_request, &response).ok());
  EXPECT_EQ(response.mentions(), 0);
  v1::Mention still;
  ASSERT_TRUE(Get(*stub_, bob_1, &still).ok());
  EXPECT_EQ(still.state(), v1::MENTION_STATE_VERIFIED);
  // And a re-send to bob.example is not erased by carol.example's tombstone.
  EXPECT_EQ(Submit("/bob/1"), bob_1);
  EXPECT_EQ(QueryCount(*database_,
                       "SELECT count(*) FROM erasures WHERE site_domain = "
                       "'carol.example'"),
            1);
}

}  // namespace
}  // namespace portcullis::integration
