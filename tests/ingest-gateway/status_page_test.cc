#include "ingest-gateway/src/status_page.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GatewayStatusPageTest, NegotiationPrefersWhatTheClientPrefers) {
  const std::pair<const char*, StatusFormat> cases[] = {
      {"", StatusFormat::kJson},
      {"*/*", StatusFormat::kJson},
      {"application/json", StatusFormat::kJson},
      {"text/html", StatusFormat::kHtml},
      {"TEXT/HTML", StatusFormat::kHtml},
      // What browsers send.
      {"text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
       StatusFormat::kHtml},
      {"application/json;q=0.5, text/html;q=0.9", StatusFormat::kHtml},
      {"text/html;q=0.5, application/json", StatusFormat::kJson},
      {"text/*", StatusFormat::kHtml},
      {"text/html;q=0, */*", StatusFormat::kJson},
      {"application/json;q=0, */*;q=0.1", StatusFormat::kHtml},
      {"text/html, application/json", StatusFormat::kJson},  // A tie: JSON.
      {"image/png", StatusFormat::kNotAcceptable},
      {"application/json;q=0, text/html;q=0", StatusFormat::kNotAcceptable},
      {"text/html;q=bogus", StatusFormat::kNotAcceptable},
  };
  for (const auto& [accept, want] : cases) {
    EXPECT_EQ(NegotiateStatusFormat(std::string(accept)), want) << accept;
  }
  EXPECT_EQ(NegotiateStatusFormat(std::nullopt), StatusFormat::kJson);
}

TEST(GatewayStatusPageTest, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x" onclick='y'>&</a>)"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
}

TEST(GatewayStatusPageTest, PageShowsTheMentionEscaped) {
  verifier::v1::Mention mention;
  mention.set_mention_id("0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c11");
  mention.set_source("https://evil.example/?q=<script>alert(1)</script>");
  mention.set_target("https://bob.example/post#\"><img src=x>");
  mention.set_state(verifier::v1::MENTION_STATE_FAILED);
  mention.set_reason("no_link");
  mention.mutable_created_at()->set_seconds(1700000000);
  const std::string page = RenderStatusHtml(mention);
  EXPECT_THAT(page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("FAILED"));
  EXPECT_THAT(page, HasSubstr("no_link"));
  EXPECT_THAT(page, HasSubstr("2023-11-14 22:13:20 UTC"));
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("<img")));
}

TEST(GatewayStatusPageTest, PageShowsTypeAuthorAndTheNoLinkDiagnosticEscaped) {
  verifier::v1::Mention verified;
  verified.set_state(verifier::v1::MENTION_STATE_VERIFIED);
  verified.set_type(verifier::v1::MENTION_TYPE_BOOKMARK);
  verified.mutable_author()->set_name("Alice <b>Bold</b>");
  verified.mutable_author()->set_url("https://alice.example/");
  const std::string page = RenderStatusHtml(verified);
  EXPECT_THAT(page, HasSubstr("<th>Type</th><td>bookmark</td>"));
  EXPECT_THAT(page, HasSubstr("Alice &lt;b&gt;Bold&lt;/b&gt;"));
  EXPECT_THAT(page, HasSubstr("https://alice.example/"));
  EXPECT_THAT(page, Not(HasSubstr("<b>")));

  verifier::v1::Mention failed;
  failed.set_state(verifier::v1::MENTION_STATE_FAILED);
  failed.set_reason("no_link");
  failed.add_links_to_target_host("https://bob.example/post-10");
  failed.add_links_to_target_host("https://bob.example/\"><script>x</script>");
  const std::string diagnostic = RenderStatusHtml(failed);
  EXPECT_THAT(diagnostic, HasSubstr("<li>https://bob.example/post-10</li>"));
  EXPECT_THAT(diagnostic, HasSubstr("&quot;&gt;&lt;script&gt;x&lt;/script&gt;"));
  EXPECT_THAT(diagnostic, Not(HasSubstr("<script")));
  EXPECT_EQ(MentionTypeName(verifier::v1::MENTION_TYPE_UNSPECIFIED), "");
  EXPECT_EQ(MentionTypeName(verifier::v1::MENTION_TYPE_REPOST), "repost");
}

}  // namespace
}  // namespace portcullis::gateway
