// Abuse controls end to end (issue 9): the source blocklist through the real gateway, verifier
// (workers on, fetching from a loopback page origin that counts requests, egress allow list
// holding only 127.0.0.1/32 and the origin's port) and PostgreSQL. A blocked source is answered
// 202 like any other and recorded FAILED `blocked` without a single fetch.

#include <boost/json.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "tools/portcullis/src/page_origin.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;
namespace v1 = portcullis::verifier::v1;

constexpr char kTarget[] = "https://bob.example/post-1";
constexpr absl::Duration kWait = absl::Seconds(20);

std::string Linking() {
  return absl::StrCat(
      "<!doctype html><html><body><article class=\"h-entry\"><a class=\"u-in-reply-to\" "
      "href=\"",
      kTarget, "\">the post</a><div class=\"e-content\">Hi</div></article></body></html>");
}

class AbuseControlsTest : public StackTest {
 protected:
  AbuseControlsTest() { start_stack_ = false; }

  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    absl::StatusOr<std::unique_ptr<cli::PageOrigin>> origin =
        cli::PageOrigin::Start("127.0.0.1", 0);
    ASSERT_TRUE(origin.ok()) << origin.status();
    origin_ = *std::move(origin);
    for (const char* path : {"/blocked/1", "/ok/1", "/later/1"}) {
      origin_->SetRoute(path, cli::PageResponse::Html(Linking()));
    }
    ASSERT_TRUE(stack_
                    ->StartVerifier({"--workers=2", "--egress_allow_cidrs=127.0.0.1/32",
                                     absl::StrCat("--fetch_allowed_ports=", origin_->port()),
                                     "--fetch_timeout=3s", "--worker_poll_interval=1s"})
                    .ok());
    ASSERT_TRUE(stack_->StartGateway().ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
    ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
    stub_ = v1::Verifier::NewStub(
        stack_->AdminChannel());
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

  grpc::Status AddBlock(const std::string& site, v1::BlockKind kind, const std::string& value) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    context.set_wait_for_ready(true);
    v1::AddBlockRequest request;
    request.mutable_block()->set_site(site);
    request.mutable_block()->set_kind(kind);
    request.mutable_block()->set_value(value);
    v1::AddBlockResponse response;
    return stub_->AddBlock(&context, request, &response);
  }

  v1::Mention Get(const std::string& id) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    context.set_wait_for_ready(true);
    v1::GetMentionRequest request;
    request.set_mention_id(id);
    v1::GetMentionResponse response;
    const grpc::Status status = stub_->GetMention(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.mention();
  }

  v1::Mention WaitForState(const std::string& id, v1::MentionState state) {
    const absl::Time deadline = absl::Now() + kWait;
    v1::Mention mention = Get(id);
    while (mention.state() != state && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
      mention = Get(id);
    }
    EXPECT_EQ(mention.state(), state) << mention.DebugString();
    return mention;
  }

  std::unique_ptr<cli::PageOrigin> origin_;
  std::unique_ptr<v1::Verifier::Stub> stub_;
};

TEST_F(AbuseControlsTest, BlockedSourceGets202ThenFailedBlockedWithZeroFetches) {
  const grpc::Status added =
      AddBlock("", v1::BLOCK_KIND_PREFIX, origin_->origin() + "/blocked/");
  ASSERT_TRUE(added.ok()) << added.error_message();

  const std::string blocked = Submit("/blocked/1");
  ASSERT_FALSE(blocked.empty());
  const v1::Mention failed = Get(blocked);
  EXPECT_EQ(failed.state(), v1::MENTION_STATE_FAILED) << "decided at submission";
  EXPECT_EQ(failed.reason(), "blocked");

  // The workers do run: an unblocked source from the same origin is fetched and verified.
  const std::string ok = Submit("/ok/1");
  WaitForState(ok, v1::MENTION_STATE_VERIFIED);
  EXPECT_GE(origin_->requests("/ok/1"), 1);
  EXPECT_EQ(origin_->requests("/blocked/1"), 0) << "a blocked source is never fetched";
  EXPECT_EQ(QueryCount(*database_, absl::StrCat("SELECT count(*) FROM verification_jobs WHERE "
                                                "mention_id = '",
                                                blocked, "'")),
            0);
  // Submitted again: the same answer, still no fetch.
  EXPECT_EQ(Submit("/blocked/1"), blocked);
  EXPECT_EQ(Get(blocked).reason(), "blocked");
  EXPECT_EQ(origin_->requests("/blocked/1"), 0);
}

TEST_F(AbuseControlsTest, VerifiedSourceBlockedLaterStopsBeingServed) {
  const std::string id = Submit("/later/1");
  WaitForState(id, v1::MENTION_STATE_VERIFIED);
  // A site-scoped domain block on the origin's host (an IP literal: matches only itself).
  const grpc::Status added = AddBlock("bob.example", v1::BLOCK_KIND_DOMAIN, "127.0.0.1");
  ASSERT_TRUE(added.ok()) << added.error_message();
  const int fetches = origin_->requests("/later/1");
  EXPECT_EQ(Submit("/later/1"), id);
  const v1::Mention mention = Get(id);
  EXPECT_EQ(mention.state(), v1::MENTION_STATE_FAILED);
  EXPECT_EQ(mention.reason(), "blocked");
  const testing::HttpResult feed =
      stack_->Get(absl::StrCat("/mentions?target=", testing::FormEncode(kTarget)));
  EXPECT_EQ(feed.status, 200) << feed.body;
  EXPECT_EQ(feed.body.find("/later/1"), std::string::npos) << "no longer in the feed: "
                                                            << feed.body;
  // No re-verification was queued. Checked after a marker that must happen: a mention from the
  // same origin to another site (the block is bob.example's only), submitted after, is fetched
  // and verified, so the workers ran past the resubmission; a job queued by it would still be
  // in the table or would have fetched /later/1 by now.
  const std::string other_target = "https://carol.example/post";
  ASSERT_TRUE(stack_->ServeTarget("https://carol.example/*").ok());
  origin_->SetRoute("/marker/1",
                    cli::PageResponse::Html(absl::StrCat(
                        "<!doctype html><html><body><a href=\"", other_target, "\">x</a>"
                        "</body></html>")));
  const testing::HttpResult marker =
      stack_->PostWebmention(origin_->origin() + "/marker/1", other_target);
  ASSERT_EQ(marker.status, 202) << marker.body << marker.error;
  WaitForState(std::string(json::parse(marker.body).at("mention_id").as_string()),
               v1::MENTION_STATE_VERIFIED);
  EXPECT_GE(origin_->requests("/marker/1"), 1);
  EXPECT_EQ(QueryCount(*database_, absl::StrCat("SELECT count(*) FROM verification_jobs WHERE "
                                                "mention_id = '",
                                                id, "'")),
            0)
      << "a re-verification was queued";
  EXPECT_EQ(origin_->requests("/later/1"), fetches) << "no re-verification was queued";
}

// The admission limits with the workers off (so queued jobs stay queued): past the PENDING limit
// of a source host the gateway answers 429 + Retry-After, past the queue limit 503 +
// Retry-After; every 202 is a stored mention with its job, every refusal stored nothing.
class AbuseLimitsTest : public StackTest {
 protected:
  AbuseLimitsTest() { start_stack_ = false; }
};

TEST_F(AbuseLimitsTest, PendingPerSourceHostThenQueueLengthAreRefusedRetryably) {
  ASSERT_TRUE(stack_
                  ->StartVerifier({"--workers=0", "--max_pending_per_source_host=2",
                                   "--max_queue_length=4"})
                  .ok());
  ASSERT_TRUE(stack_->StartGateway().ok());
  ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());

  int accepted = 0;
  const auto post = [&](const std::string& source) {
    const testing::HttpResult result = stack_->PostWebmention(source, kTarget);
    accepted += result.status == 202 ? 1 : 0;
    return result;
  };
  EXPECT_EQ(post("https://flood.example/1").status, 202);
  EXPECT_EQ(post("https://flood.example/2").status, 202);
  const testing::HttpResult over_host = post("https://flood.example/3");
  EXPECT_EQ(over_host.status, 429) << over_host.body;
  EXPECT_FALSE(over_host.Header("retry-after").empty());
  // A repeat of a PENDING pair is still a 202 (it queues nothing).
  EXPECT_EQ(post("https://flood.example/1").status, 202);
  accepted -= 1;
  EXPECT_EQ(post("https://c.example/1").status, 202);
  EXPECT_EQ(post("https://d.example/1").status, 202);
  const testing::HttpResult over_queue = post("https://e.example/1");
  EXPECT_EQ(over_queue.status, 503) << over_queue.body;
  EXPECT_FALSE(over_queue.Header("retry-after").empty());

  EXPECT_EQ(accepted, 4);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), accepted)
      << "every 202 is stored, no refusal is";
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions m JOIN verification_jobs j "
                                   "ON j.mention_id = m.id WHERE m.state = 'PENDING'"),
            accepted)
      << "every accepted mention is queued";
}

}  // namespace
}  // namespace portcullis::integration
