// HtmlSourceAnalyzer over real pages: the link, the type, the content and the two authorship
// steps, as the verifier composes html/.
#include "verifier-service/src/verification/html_source_analyzer.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::verification {
namespace {

constexpr char kTarget[] = "https://bob.example/post";

url::Url U(absl::string_view text) { return *url::ParseUrl(text); }

TEST(VerifierHtmlSourceAnalyzerTest, AReplyWithAnOnPageAuthor) {
  const SourceAnalysis analysis = HtmlSourceAnalyzer().Analyze(
      "<div class=h-entry><a class='p-author h-card' href=/>Alice</a>"
      "<a class=u-in-reply-to href=https://bob.example/post>re</a>"
      "<div class=e-content><p>Yes <b>indeed</b><script>x()</script></p></div></div>",
      U("https://alice.example/reply"), kTarget);
  ASSERT_TRUE(analysis.links_to_target);
  EXPECT_EQ(analysis.content.type, "reply");
  EXPECT_EQ(analysis.content.author_name, "Alice");
  EXPECT_EQ(analysis.content.author_url, "https://alice.example/");
  EXPECT_EQ(analysis.content.content_text, "Yes indeed");
  EXPECT_EQ(analysis.content.content_html, "<p>Yes <b>indeed</b></p>");
  EXPECT_FALSE(analysis.author_page_url.has_value());
}

TEST(VerifierHtmlSourceAnalyzerTest, NoLinkGivesTheNearMisses) {
  const SourceAnalysis analysis = HtmlSourceAnalyzer().Analyze(
      "<p><a href='https://bob.example/post-10'>ten</a> https://bob.example/post</p>",
      U("https://alice.example/reply"), kTarget);
  EXPECT_FALSE(analysis.links_to_target);
  EXPECT_EQ(analysis.links_to_target_host, store::LinkDiagnostic{"https://bob.example/post-10"});
}

TEST(VerifierHtmlSourceAnalyzerTest, AnAuthorUrlIsFetchedAndReadInASecondStep) {
  HtmlSourceAnalyzer analyzer;
  const SourceAnalysis analysis = analyzer.Analyze(
      "<div class=h-entry><a class=u-author href=https://alice.example/about>me</a>"
      "<a class=u-like-of href=https://bob.example/post>like</a></div>",
      U("https://alice.example/like"), kTarget);
  ASSERT_TRUE(analysis.links_to_target);
  EXPECT_EQ(analysis.content.type, "like");
  ASSERT_TRUE(analysis.author_page_url.has_value());
  EXPECT_EQ(*analysis.author_page_url, "https://alice.example/about");
  // What to keep when the page names nobody: the URL the post gave.
  EXPECT_EQ(analysis.content.author_url, "https://alice.example/about");

  const AuthorCard card = analyzer.AuthorFromPage(
      "<div class=h-card><a class='u-url p-name' href=/about>Alice A.</a>"
      "<img class=u-photo src=/me.jpg alt=''></div>",
      "https://alice.example/about", U("https://alice.example/about"));
  EXPECT_EQ(card.name, "Alice A.");
  EXPECT_EQ(card.url, "https://alice.example/about");
  EXPECT_EQ(card.photo, "https://alice.example/me.jpg");
  EXPECT_EQ(analyzer.AuthorFromPage("<p>nobody</p>", "https://alice.example/about",
                                    U("https://alice.example/about")),
            AuthorCard{});
}

TEST(VerifierHtmlSourceAnalyzerTest, APageWithoutMicroformatsIsAPlainMention) {
  const SourceAnalysis analysis =
      HtmlSourceAnalyzer().Analyze("<p>See <img src=post></p>", U("https://bob.example/gallery/x"),
                                   "https://bob.example/gallery/post");
  ASSERT_TRUE(analysis.links_to_target);
  EXPECT_EQ(analysis.content.type, "mention");
  EXPECT_EQ(analysis.content.url, "https://bob.example/gallery/x");
}

}  // namespace
}  // namespace portcullis::verifier::verification
