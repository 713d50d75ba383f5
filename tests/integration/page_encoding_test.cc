// Issue 22 end to end: a page that declares its encoding only in the HTTP header, served by a
// loopback origin to the real verifier (workers on, egress allow list = the origin only) through
// the real gateway. Before, the charset was ignored and the author stored as "Jos\uFFFD
// M\uFFFDller"; the mention must end VERIFIED with the author's name and content as written, and
// its author taken from the page's own h-card without fetching the author page. And a webmention
// source whose host is an ambiguous numeric spelling of the (allow-listed) origin is refused as
// forbidden_url without contacting it.

#include <boost/json.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/integration/fixture.h"
#include "tools/portcullis/src/page_origin.h"

namespace portcullis::integration {
namespace {

namespace v1 = portcullis::verifier::v1;

class PageEncodingIntegrationTest : public StackTest {
 protected:
  PageEncodingIntegrationTest() { start_stack_ = false; }

  void SetUp() override {
    StackTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) {
      return;
    }
    absl::StatusOr<std::unique_ptr<cli::PageOrigin>> origin =
        cli::PageOrigin::Start("127.0.0.1", 0);
    ASSERT_TRUE(origin.ok()) << origin.status();
    origin_ = *std::move(origin);
    const std::vector<std::string> verifier_flags = {
        "--workers=1", "--egress_allow_cidrs=127.0.0.1/32",
        absl::StrCat("--fetch_allowed_ports=", origin_->port()), "--worker_poll_interval=1s"};
    ASSERT_TRUE(stack_->StartVerifier(verifier_flags).ok());
    ASSERT_TRUE(stack_->StartGateway().ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
    ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  }

  void TearDown() override {
    StackTest::TearDown();  // the verifier stops fetching before its origin goes away
    origin_.reset();
  }

  // The mention once it has left PENDING (or the last answer after 20 s).
  v1::Mention Settled(const std::string& mention_id) {
    std::unique_ptr<v1::Verifier::Stub> stub = v1::Verifier::NewStub(stack_->AdminChannel());
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    for (;;) {
      grpc::ClientContext context;
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
      v1::GetMentionRequest request;
      request.set_mention_id(mention_id);
      v1::GetMentionResponse response;
      const grpc::Status status = stub->GetMention(&context, request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      const v1::MentionState state = response.mention().state();
      if (!status.ok() || absl::Now() > deadline ||
          (state != v1::MENTION_STATE_PENDING && state != v1::MENTION_STATE_UNSPECIFIED)) {
        return response.mention();
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  std::unique_ptr<cli::PageOrigin> origin_;
};

TEST_F(PageEncodingIntegrationTest, ALatin1PageWithTheCharsetOnlyInTheHeaderIsReadCorrectly) {
  cli::PageResponse page;
  page.headers = {{"Content-Type", "text/html; charset=ISO-8859-1"}};
  // ISO-8859-1 bytes, no <meta charset>: é = E9, ü = FC, ß = DF. The author is a rel=author URL
  // whose h-card is on the page itself.
  page.body = absl::StrCat(
      "<!doctype html><html><head><title>Gr\xFC\xDF", "e</title>",
      "<link rel=\"author\" href=\"", origin_->origin(), "/about\"></head><body>",
      "<header class=\"h-card\"><a class=\"p-name u-url\" href=\"/about\">Jos\xE9 M\xFCller</a>",
      "</header><article class=\"h-entry\"><div class=\"e-content\">Sch\xF6n geschrieben, ",
      "<a href=\"https://bob.example/post-1\">Bob</a>!</div></article></body></html>");
  origin_->SetRoute("/latin1", page);
  origin_->SetRoute("/about", cli::PageResponse::Status(404));

  const testing::HttpResult submitted =
      stack_->PostWebmention(origin_->origin() + "/latin1", "https://bob.example/post-1");
  ASSERT_EQ(submitted.status, 202) << submitted.body << submitted.error;
  const std::string id(boost::json::parse(submitted.body).at("mention_id").as_string());

  const v1::Mention mention = Settled(id);
  ASSERT_EQ(mention.state(), v1::MENTION_STATE_VERIFIED) << mention.DebugString();
  EXPECT_EQ(mention.author().name(), "José Müller");
  EXPECT_EQ(mention.author().url(), origin_->origin() + "/about");
  EXPECT_EQ(mention.content_text(), "Schön geschrieben, Bob!");
  EXPECT_EQ(origin_->requests("/latin1"), 1);
  EXPECT_EQ(origin_->requests("/about"), 0);  // the page's own h-card: no author-page fetch
}

TEST_F(PageEncodingIntegrationTest, ASourceWithAnAmbiguousNumericHostFailsAsForbiddenUrl) {
  // 127.0.0.1 is allow-listed for this stack; these spellings of it are refused all the same
  // (a path of its own for each, so that each is a mention of its own).
  for (const std::string host : {"0x7f.0.0.1", "127.1", "0177.0.0.1", "2130706433"}) {
    const std::string path = "/page-" + host;
    origin_->SetRoute(path, cli::PageResponse::Html(
                                "<a href=\"https://bob.example/post-1\">Bob</a>"));
    const std::string source = absl::StrCat("http://", host, ":", origin_->port(), path);
    const testing::HttpResult submitted =
        stack_->PostWebmention(source, "https://bob.example/post-1");
    ASSERT_EQ(submitted.status, 202) << host << ": " << submitted.body << submitted.error;
    const v1::Mention mention =
        Settled(std::string(boost::json::parse(submitted.body).at("mention_id").as_string()));
    EXPECT_EQ(mention.state(), v1::MENTION_STATE_FAILED) << host << ": " << mention.DebugString();
    EXPECT_EQ(mention.reason(), "forbidden_url") << host;
    EXPECT_EQ(origin_->requests(path), 0) << host;
  }
}

}  // namespace
}  // namespace portcullis::integration
