// Webmention receiver scenarios end to end: POST /webmention to the real gateway, the real
// verifier (workers on) fetching the source from a page origin on 127.0.0.1 through the
// SSRF-guarded fetcher — its egress allow list holding exactly 127.0.0.1/32 and the origin's port
// (as SSRF-POLICY.md permits for tests only) — and the outcome read back over gRPC (GetMention)
// and from the status page. Every wait is bounded.

#include <algorithm>
#include <boost/json.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
using cli::PageResponse;

constexpr char kTarget[] = "https://bob.example/post-1";
constexpr absl::Duration kWait = absl::Seconds(20);

std::string Page(const std::string& body) {
  return absl::StrCat("<!doctype html><html><head><title>t</title></head><body>", body,
                      "</body></html>");
}

// An h-entry by Alice with `property` pointing at the target and `content` as e-content.
std::string Entry(const std::string& property, const std::string& content) {
  return Page(absl::StrCat(
      "<article class=\"h-entry\">"
      "<a class=\"p-author h-card\" href=\"https://alice.example/\">Alice</a> ",
      property.empty()
          ? ""
          : absl::StrCat("<a class=\"", property, "\" href=\"", kTarget, "\">", "the post</a>"),
      "<div class=\"e-content\">", content, "</div></article>"));
}

class VerificationScenariosTest : public StackTest {
 protected:
  VerificationScenariosTest() { start_stack_ = false; }

  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    absl::StatusOr<std::unique_ptr<cli::PageOrigin>> origin =
        cli::PageOrigin::Start("127.0.0.1", 0);
    ASSERT_TRUE(origin.ok()) << origin.status();
    origin_ = *std::move(origin);
    ASSERT_TRUE(stack_
                    ->StartVerifier({
                        "--workers=2",
                        "--egress_allow_cidrs=127.0.0.1/32",
                        absl::StrCat("--fetch_allowed_ports=", origin_->port()),
                        "--fetch_timeout=3s",
                        "--retry_base=200ms",
                        "--retry_cap=400ms",
                        "--retry_max_attempts=100",
                        "--worker_poll_interval=1s",
                    })
                    .ok());
    ASSERT_TRUE(stack_->StartGateway().ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
    ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
    stub_ = v1::Verifier::NewStub(
        stack_->AdminChannel());
  }

  void TearDown() override {
    stub_.reset();          // An open client connection would hold up the verifier's drain.
    StackTest::TearDown();  // The verifier stops fetching before its origin goes away.
    origin_.reset();
  }

  std::string Source(const std::string& path) const { return origin_->origin() + path; }

  // POST /webmention; the mention id from the 202.
  std::string Submit(const std::string& path, const std::string& target = kTarget) {
    const testing::HttpResult result = stack_->PostWebmention(Source(path), target);
    EXPECT_EQ(result.status, 202) << result.body << result.error;
    if (result.status != 202) {
      return "";
    }
    return std::string(json::parse(result.body).at("mention_id").as_string());
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

  // Polls GetMention until `done` holds (at most kWait); the last answer either way.
  template <typename Predicate>
  v1::Mention WaitFor(const std::string& id, Predicate done) {
    const absl::Time deadline = absl::Now() + kWait;
    v1::Mention mention = Get(id);
    while (!done(mention) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(20));
      mention = Get(id);
    }
    EXPECT_TRUE(done(mention)) << "gave up waiting; last: " << mention.DebugString();
    return mention;
  }

  v1::Mention WaitForState(const std::string& id, v1::MentionState state) {
    return WaitFor(id, [state](const v1::Mention& m) { return m.state() == state; });
  }

  v1::Mention Verified(const std::string& path, const std::string& target = kTarget) {
    return WaitForState(Submit(path, target), v1::MENTION_STATE_VERIFIED);
  }

  v1::Mention Failed(const std::string& path, const std::string& target = kTarget) {
    return WaitForState(Submit(path, target), v1::MENTION_STATE_FAILED);
  }

  std::unique_ptr<cli::PageOrigin> origin_;
  std::unique_ptr<v1::Verifier::Stub> stub_;
};

TEST_F(VerificationScenariosTest, AReplyIsVerifiedWithItsTypeAuthorAndContent) {
  origin_->SetRoute("/reply", PageResponse::Html(Entry("u-in-reply-to", "<p>Great post!</p>")));
  const absl::Time submitted = absl::Now();
  const std::string id = Submit("/reply");
  const v1::Mention mention = WaitForState(id, v1::MENTION_STATE_VERIFIED);
  std::cout << "submission to VERIFIED on loopback: "
            << absl::FormatDuration(absl::Now() - submitted) << std::endl;
  EXPECT_EQ(mention.type(), v1::MENTION_TYPE_REPLY);
  EXPECT_EQ(mention.author().name(), "Alice");
  EXPECT_EQ(mention.author().url(), "https://alice.example/");
  EXPECT_EQ(mention.content_text(), "Great post!");
  EXPECT_EQ(mention.content_html(), "<p>Great post!</p>");
  EXPECT_EQ(mention.reason(), "");
  EXPECT_GE(origin_->requests("/reply"), 1);

  // The status page says the same.
  const testing::HttpResult status = stack_->Get(absl::StrCat("/webmention/status/", id));
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(json::parse(status.body).at("state").as_string(), "VERIFIED") << status.body;
}

TEST_F(VerificationScenariosTest, TimeFromSubmissionToVerifiedOnLoopback) {
  constexpr int kSamples = 20;
  std::vector<absl::Duration> took;
  for (int i = 0; i < kSamples; ++i) {
    const std::string path = absl::StrCat("/timed-", i);
    origin_->SetRoute(path, PageResponse::Html(Entry("u-in-reply-to", "<p>Timed</p>")));
    const absl::Time submitted = absl::Now();
    const std::string id = Submit(path);
    const absl::Time deadline = submitted + kWait;
    while (Get(id).state() != v1::MENTION_STATE_VERIFIED && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    took.push_back(absl::Now() - submitted);
    EXPECT_LT(took.back(), absl::Seconds(2)) << "sample " << i;
  }
  std::sort(took.begin(), took.end());
  std::cout << "submission to VERIFIED on loopback over " << kSamples << " mentions: median "
            << absl::FormatDuration(took[kSamples / 2]) << ", max "
            << absl::FormatDuration(took.back()) << std::endl;
}

TEST_F(VerificationScenariosTest, ALikeARepostAndABookmarkAreTyped) {
  origin_->SetRoute("/like", PageResponse::Html(Entry("u-like-of", "")));
  origin_->SetRoute("/repost", PageResponse::Html(Entry("u-repost-of", "")));
  origin_->SetRoute("/bookmark", PageResponse::Html(Entry("u-bookmark-of", "")));
  EXPECT_EQ(Verified("/like").type(), v1::MENTION_TYPE_LIKE);
  EXPECT_EQ(Verified("/repost").type(), v1::MENTION_TYPE_REPOST);
  EXPECT_EQ(Verified("/bookmark").type(), v1::MENTION_TYPE_BOOKMARK);
}

TEST_F(VerificationScenariosTest, APlainLinkIsAMention) {
  origin_->SetRoute(
      "/plain",
      PageResponse::Html(Page(absl::StrCat("<p>I read <a href=\"", kTarget, "\">this</a>.</p>"))));
  EXPECT_EQ(Verified("/plain").type(), v1::MENTION_TYPE_MENTION);
}

TEST_F(VerificationScenariosTest, AnImageOfTheTargetIsAMention) {
  origin_->SetRoute(
      "/img",
      PageResponse::Html(Page("<p>Look:</p><img src=\"https://bob.example/photo.jpg\" alt=\"\">")));
  EXPECT_EQ(Verified("/img", "https://bob.example/photo.jpg").type(), v1::MENTION_TYPE_MENTION);
}

TEST_F(VerificationScenariosTest, ARelativeLinkResolvesAgainstTheBase) {
  origin_->SetRoute("/relative",
                    PageResponse::Html(absl::StrCat(
                        "<!doctype html><html><head><base href=\"https://bob.example/blog/\">"
                        "</head><body><a href=\"../post-1\">a post</a></body></html>")));
  EXPECT_EQ(Verified("/relative").state(), v1::MENTION_STATE_VERIFIED);
}

TEST_F(VerificationScenariosTest, ALinkOnlyInTextOrInACommentIsNoLink) {
  origin_->SetRoute("/text", PageResponse::Html(Page(absl::StrCat("<p>See ", kTarget, "</p>"))));
  origin_->SetRoute(
      "/comment",
      PageResponse::Html(Page(absl::StrCat("<!-- <a href=\"", kTarget, "\">x</a> --><p>hi</p>"))));
  const v1::Mention text = Failed("/text");
  EXPECT_EQ(text.reason(), "no_link");
  EXPECT_EQ(text.type(), v1::MENTION_TYPE_UNSPECIFIED);
  EXPECT_EQ(Failed("/comment").reason(), "no_link");
}

TEST_F(VerificationScenariosTest, PostTenIsNotPostOneAndIsShownAsANearMiss) {
  origin_->SetRoute(
      "/near",
      PageResponse::Html(Page("<p><a href=\"https://bob.example/post-10\">post ten</a></p>")));
  const v1::Mention mention = Failed("/near");
  EXPECT_EQ(mention.reason(), "no_link");
  ASSERT_EQ(mention.links_to_target_host_size(), 1);
  EXPECT_EQ(mention.links_to_target_host(0), "https://bob.example/post-10");
}

TEST_F(VerificationScenariosTest, AnUpdateChangesTheContentOfTheSameRow) {
  origin_->SetRoute("/update", PageResponse::Html(Entry("u-in-reply-to", "<p>First take</p>")));
  const std::string id = Submit("/update");
  EXPECT_EQ(WaitForState(id, v1::MENTION_STATE_VERIFIED).content_text(), "First take");
  origin_->SetRoute("/update", PageResponse::Html(Entry("u-in-reply-to", "<p>Second take</p>")));
  EXPECT_EQ(Submit("/update"), id);
  const v1::Mention updated =
      WaitFor(id, [](const v1::Mention& m) { return m.content_text() == "Second take"; });
  EXPECT_EQ(updated.state(), v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 1);
}

TEST_F(VerificationScenariosTest, AnUpdateThatRemovesTheLinkFailsAndClearsTheContent) {
  origin_->SetRoute("/unmention", PageResponse::Html(Entry("u-in-reply-to", "<p>Hello</p>")));
  const std::string id = Submit("/unmention");
  EXPECT_EQ(WaitForState(id, v1::MENTION_STATE_VERIFIED).content_text(), "Hello");
  origin_->SetRoute("/unmention", PageResponse::Html(Entry("", "<p>Changed my mind</p>")));
  EXPECT_EQ(Submit("/unmention"), id);
  const v1::Mention gone = WaitForState(id, v1::MENTION_STATE_FAILED);
  EXPECT_EQ(gone.reason(), "no_link");
  EXPECT_EQ(gone.content_text(), "");
  EXPECT_EQ(gone.content_html(), "");
  EXPECT_FALSE(gone.has_author());
}

TEST_F(VerificationScenariosTest, GoneIsSourceGone) {
  origin_->SetRoute("/gone", PageResponse::Status(410));
  EXPECT_EQ(Failed("/gone").reason(), "source_gone");
}

TEST_F(VerificationScenariosTest, A503StaysPendingAndIsRetriedUntilThe200) {
  origin_->SetRoute("/flaky", PageResponse::Status(503));
  const std::string id = Submit("/flaky");
  // Retried (attempts counted) and still PENDING while the source answers 503.
  v1::Mention mention = WaitFor(id, [](const v1::Mention& m) { return m.attempts() >= 2; });
  EXPECT_EQ(mention.state(), v1::MENTION_STATE_PENDING);
  origin_->SetRoute("/flaky", PageResponse::Html(Entry("u-like-of", "")));
  mention = WaitForState(id, v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(mention.type(), v1::MENTION_TYPE_LIKE);
}

TEST_F(VerificationScenariosTest, A503DuringReverificationKeepsTheVerifiedData) {
  origin_->SetRoute("/kept", PageResponse::Html(Entry("u-in-reply-to", "<p>Kept</p>")));
  const std::string id = Submit("/kept");
  WaitForState(id, v1::MENTION_STATE_VERIFIED);
  origin_->SetRoute("/kept", PageResponse::Status(503));
  const int before = origin_->requests("/kept");
  EXPECT_EQ(Submit("/kept"), id);
  // Wait until the 503 was seen at least twice: the mention keeps its state and content.
  const absl::Time deadline = absl::Now() + kWait;
  while (origin_->requests("/kept") < before + 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_GE(origin_->requests("/kept"), before + 2);
  v1::Mention mention = Get(id);
  EXPECT_EQ(mention.state(), v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(mention.content_text(), "Kept");
  EXPECT_EQ(mention.author().name(), "Alice");
  origin_->SetRoute("/kept", PageResponse::Html(Entry("u-in-reply-to", "<p>Kept, edited</p>")));
  mention = WaitFor(id, [](const v1::Mention& m) { return m.content_text() == "Kept, edited"; });
  EXPECT_EQ(mention.state(), v1::MENTION_STATE_VERIFIED);
}

TEST_F(VerificationScenariosTest, ARedirectChainIsFollowedToTheRealPage) {
  origin_->SetRoute("/start", PageResponse::Redirect(301, "/middle"));
  origin_->SetRoute("/middle", PageResponse::Redirect(302, Source("/final")));
  origin_->SetRoute("/final", PageResponse::Html(Entry("u-in-reply-to", "<p>Moved</p>")));
  const v1::Mention mention = Verified("/start");
  EXPECT_EQ(mention.content_text(), "Moved");
  EXPECT_EQ(origin_->requests("/final"), 1);
}

TEST_F(VerificationScenariosTest, AnXssPayloadNeverReachesTheStoredHtml) {
  origin_->SetRoute(
      "/xss", PageResponse::Html(Entry(
                  "u-in-reply-to",
                  "<p>Hi<script>alert(1)</script></p><img src=\"https://alice.example/a.png\" "
                  "onerror=\"alert(2)\"><a href=\"javascript:alert(3)\">click</a>"
                  "<a href=\"JaVaScRiPt&colon;alert(4)\">again</a>")));
  const v1::Mention mention = Verified("/xss");
  const std::string& html = mention.content_html();
  EXPECT_FALSE(html.empty());
  for (const char* bad : {"<script", "alert(", "onerror", "javascript:", "JaVaScRiPt"}) {
    EXPECT_FALSE(absl::StrContains(html, bad)) << bad << " in " << html;
  }
  EXPECT_TRUE(absl::StrContains(html, "https://alice.example/a.png")) << html;
  // Nor the JSON of the status page.
  const testing::HttpResult status =
      stack_->Get(absl::StrCat("/webmention/status/", mention.mention_id()));
  EXPECT_FALSE(absl::StrContains(status.body, "<script")) << status.body;
}

TEST_F(VerificationScenariosTest, AForbiddenAddressOutsideTheAllowListIsRefused) {
  // 127.0.0.2 is loopback too, but not on the allow list: never fetched.
  const testing::HttpResult result =
      stack_->PostWebmention(absl::StrCat("http://127.0.0.2:", origin_->port(), "/reply"), kTarget);
  ASSERT_EQ(result.status, 202) << result.body;
  const std::string id(json::parse(result.body).at("mention_id").as_string());
  EXPECT_EQ(WaitForState(id, v1::MENTION_STATE_FAILED).reason(), "forbidden_address");
}

TEST_F(VerificationScenariosTest, VerifyNowVerifiesSynchronouslyThroughTheCli) {
  origin_->SetRoute("/now", PageResponse::Html(Entry("u-bookmark-of", "")));
  const testing::CommandResult cli = testing::RunCommand(
      PORTCULLIS_CLI_BINARY, stack_->CliArgs({"mention", "verify", Source("/now"), kTarget}));
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  const json::value answer = json::parse(cli.output);
  EXPECT_EQ(answer.at("decision").as_string(), "DECISION_ACCEPTED") << cli.output;
  EXPECT_EQ(answer.at("mention").at("state").as_string(), "MENTION_STATE_VERIFIED") << cli.output;
  EXPECT_EQ(answer.at("mention").at("type").as_string(), "MENTION_TYPE_BOOKMARK") << cli.output;
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM verification_jobs"), 0);

  origin_->SetRoute("/now", PageResponse::Status(410));
  const testing::CommandResult again = testing::RunCommand(
      PORTCULLIS_CLI_BINARY, stack_->CliArgs({"mention", "verify", Source("/now"), kTarget}));
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_EQ(json::parse(again.output).at("mention").at("reason").as_string(), "source_gone");
}

}  // namespace
}  // namespace portcullis::integration
