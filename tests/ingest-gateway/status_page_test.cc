#include "ingest-gateway/src/status_page.h"

#include <set>
#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::AllOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using verifier::v1::MENTION_STATE_FAILED;
using verifier::v1::MENTION_STATE_PENDING;
using verifier::v1::MENTION_STATE_VERIFIED;

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
  EXPECT_THAT(diagnostic, HasSubstr("<li><a href=\"https://bob.example/post-10\" "
                                    "rel=\"nofollow noopener noreferrer\">"
                                    "https://bob.example/post-10</a></li>"));
  EXPECT_THAT(diagnostic, HasSubstr("&quot;&gt;&lt;script&gt;x&lt;/script&gt;"));
  EXPECT_THAT(diagnostic, Not(HasSubstr("<script")));
  EXPECT_EQ(MentionTypeName(verifier::v1::MENTION_TYPE_UNSPECIFIED), "");
  EXPECT_EQ(MentionTypeName(verifier::v1::MENTION_TYPE_REPOST), "repost");
}

TEST(GatewayStatusPageTest, NoLinkSaysWhatThePageLinksToInsteadAndWhatToDo) {
  verifier::v1::Mention failed;
  failed.set_state(MENTION_STATE_FAILED);
  failed.set_reason("no_link");
  failed.set_source("https://alice.example/reply");
  failed.set_target("https://bob.example/post");
  failed.add_links_to_target_host("https://bob.example/posts");
  const std::string page = RenderStatusHtml(failed, absl::UnixEpoch());
  EXPECT_THAT(page, HasSubstr("Your page does not link to the target."));
  EXPECT_THAT(page, HasSubstr("It links to these pages on that site — did you mean one of those?"));
  EXPECT_THAT(page, HasSubstr("Add a link to the exact target address to your page"));

  // Without the verifier's near misses: the plain sentence, no question.
  failed.clear_links_to_target_host();
  const std::string plain = RenderStatusHtml(failed, absl::UnixEpoch());
  EXPECT_THAT(plain, HasSubstr("Your page does not link to the target."));
  EXPECT_THAT(plain, Not(HasSubstr("did you mean")));
}

TEST(GatewayStatusPageTest, EveryStateAndFailedReasonHasItsOwnSentenceAndANextStep) {
  // The FAILED reasons the verifier records: store::kReasonNoLink, store::kReasonSourceGone,
  // "blocked", "unreachable" (verification_worker) and every permanent FetchOutcomeName.
  const char* reasons[] = {"no_link",       "source_gone",       "blocked",
                           "unreachable",   "bad_url",           "bad_scheme",
                           "forbidden_url", "forbidden_address", "dns_not_found",
                           "too_many_redirects", "bad_redirect", "too_large",
                           "unsupported_content_type", "http_4xx", "tls_failed"};
  const StatusAdvice unknown = AdviceFor(MENTION_STATE_FAILED, "something_new");
  std::set<std::string> summaries;
  for (const char* reason : reasons) {
    const StatusAdvice advice = AdviceFor(MENTION_STATE_FAILED, reason);
    EXPECT_NE(advice.summary, unknown.summary) << reason;
    EXPECT_FALSE(advice.next_step.empty()) << reason;
    EXPECT_TRUE(summaries.insert(advice.summary).second) << reason << ": same sentence as another";
  }
  EXPECT_THAT(AdviceFor(MENTION_STATE_FAILED, "dns_not_found").summary,
              HasSubstr("does not exist in DNS"));
  EXPECT_FALSE(unknown.next_step.empty());
  EXPECT_THAT(AdviceFor(MENTION_STATE_PENDING, "").summary, HasSubstr("waiting to be checked"));
  EXPECT_THAT(AdviceFor(MENTION_STATE_VERIFIED, "").summary, HasSubstr("links to the target"));
}

TEST(GatewayStatusPageTest, TimesAreAbsoluteAndRelative) {
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  EXPECT_EQ(RelativeTime(now, now), "just now");
  EXPECT_EQ(RelativeTime(now + absl::Seconds(5), now), "just now");
  EXPECT_EQ(RelativeTime(now - absl::Seconds(59), now), "just now");
  EXPECT_EQ(RelativeTime(now - absl::Minutes(1), now), "1 minute ago");
  EXPECT_EQ(RelativeTime(now - absl::Minutes(59), now), "59 minutes ago");
  EXPECT_EQ(RelativeTime(now - absl::Hours(1), now), "1 hour ago");
  EXPECT_EQ(RelativeTime(now - absl::Hours(47), now), "47 hours ago");
  EXPECT_EQ(RelativeTime(now - absl::Hours(72), now), "3 days ago");

  verifier::v1::Mention mention;
  mention.set_state(MENTION_STATE_VERIFIED);
  mention.mutable_created_at()->set_seconds(1700000000 - 300);
  mention.mutable_verified_at()->set_seconds(1700000000 - 7200);
  const std::string page = RenderStatusHtml(mention, now);
  EXPECT_THAT(page, HasSubstr("<th>Received</th><td><time datetime=\"2023-11-14T22:08:20Z\">"
                              "2023-11-14 22:08:20 UTC</time> <span class=\"relative\">"
                              "(5 minutes ago)</span></td>"));
  EXPECT_THAT(page, HasSubstr("(2 hours ago)"));
  EXPECT_THAT(page, Not(HasSubstr("Last change")));  // Unset: no row.
}

TEST(GatewayStatusPageTest, SourceAndTargetAreLinksOnlyWhenHttp) {
  verifier::v1::Mention mention;
  mention.set_state(MENTION_STATE_PENDING);
  mention.set_source("https://alice.example/reply?a=1&b=2");
  mention.set_target("javascript:alert(1)");
  const std::string page = RenderStatusHtml(mention, absl::UnixEpoch());
  EXPECT_THAT(page, HasSubstr("<th>Source</th><td><a href=\"https://alice.example/reply?a=1&amp;b=2\""));
  EXPECT_THAT(page, HasSubstr("<th>Target</th><td>javascript:alert(1)</td>"));
  EXPECT_THAT(page, Not(HasSubstr("href=\"javascript")));
}

TEST(GatewayStatusPageTest, PageLoadsOnlyTheGatewayStylesheetAndHasNoInlineStyleOrScript) {
  verifier::v1::Mention mention;
  mention.set_state(MENTION_STATE_FAILED);
  mention.set_reason("no_link");
  mention.set_source("https://alice.example/\" style=\"x");
  const std::string page = RenderStatusHtml(mention, absl::UnixEpoch());
  EXPECT_THAT(page, HasSubstr("<link rel=\"stylesheet\" href=\"/webmention/status.css\">"));
  EXPECT_THAT(page, HasSubstr("<meta name=\"viewport\" content=\"width=device-width, "
                              "initial-scale=1\">"));
  EXPECT_THAT(page, HasSubstr("<span class=\"state state-failed\">FAILED</span>"));
  EXPECT_THAT(page, AllOf(Not(HasSubstr("<style")), Not(HasSubstr(" style=\"")),
                          Not(HasSubstr("<script")), Not(ContainsRegex(" on[a-z]+=\""))));

  const http::HttpResponse html = StatusHtmlResponse(mention);
  EXPECT_EQ(html.headers.Get("Content-Security-Policy"), kStatusPageContentSecurityPolicy);
  EXPECT_THAT(std::string(kStatusPageContentSecurityPolicy),
              AllOf(HasSubstr("default-src 'none'"), HasSubstr("style-src 'self'"),
                    Not(HasSubstr("unsafe"))));
  EXPECT_EQ(html.headers.Get("Cache-Control"), "no-store");

  const http::HttpResponse css = StatusStylesheetResponse();
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.headers.Get("Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(css.headers.Get("Cache-Control"), "public, max-age=604800");
  // Readable width, a phone layout, dark mode.
  EXPECT_THAT(css.body, AllOf(HasSubstr("max-width: 42rem"), HasSubstr("@media (max-width:"),
                              HasSubstr("@media (prefers-color-scheme: dark)"),
                              HasSubstr(".state-failed")));
}

}  // namespace
}  // namespace portcullis::gateway
