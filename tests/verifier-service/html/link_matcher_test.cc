#include "verifier-service/src/html/link_matcher.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::html {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kPage[] = "https://source.example/notes/1";

url::Url U(const std::string& text) {
  absl::StatusOr<url::Url> parsed = url::ParseUrl(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *parsed : *url::ParseUrl("http://invalid.invalid/");
}

LinkMatch Find(const std::string& html, const std::string& target,
               const LinkMatchOptions& options = {}, const std::string& page = kPage) {
  const HtmlDocument document = HtmlDocument::Parse(html);
  return FindLink(document, U(page), U(target), options);
}

bool Links(const std::string& html, const std::string& target) { return Find(html, target).found; }

// ---- what counts as a link ---------------------------------------------------------------------

TEST(LinkMatcherTest, EveryElementKind) {
  const std::string t = "https://target.example/post-1";
  const struct {
    std::string html;
    std::string matched_by;
  } cases[] = {
      {"<a href='https://target.example/post-1'>x</a>", "a[href]"},
      {"<map name=m><area href='https://target.example/post-1'></map>", "area[href]"},
      {"<link rel=in-reply-to href='https://target.example/post-1'>", "link[href]"},
      {"<img src='https://target.example/post-1'>", "img[src]"},
      {"<video src='https://target.example/post-1'></video>", "video[src]"},
      {"<audio src='https://target.example/post-1'></audio>", "audio[src]"},
      {"<video><source src='https://target.example/post-1'></video>", "source[src]"},
      {"<picture><source src='https://target.example/post-1'><img src=x></picture>", "source[src]"},
  };
  for (const auto& c : cases) {
    const LinkMatch match = Find(c.html, t);
    EXPECT_TRUE(match.found) << c.html;
    EXPECT_EQ(match.matched_by, c.matched_by) << c.html;
    EXPECT_THAT(match.links_to_target_host, IsEmpty());
  }
}

TEST(LinkMatcherTest, AttributesThatAreNotLinksDoNotCount) {
  const std::string t = "https://target.example/p";
  for (const std::string html : {
           "<img srcset='https://target.example/p 2x' src='other.jpg'>",
           "<img data-src='https://target.example/p'>",
           "<video poster='https://target.example/p'></video>",
           "<iframe src='https://target.example/p'></iframe>",
           "<a title='https://target.example/p' href='/x'>x</a>",
           "<a name='https://target.example/p'>x</a>",
           "<form action='https://target.example/p'></form>",
           "<div href='https://target.example/p'></div>",
           "<img href='https://target.example/p'>",
           "<a src='https://target.example/p'>x</a>",
           "<svg><a href='https://target.example/p'><text>x</text></a></svg>",
       }) {
    EXPECT_FALSE(Links(html, t)) << html;
  }
}

TEST(LinkMatcherTest, TextCommentsScriptsStylesAndTemplatesAreNotLinks) {
  const std::string t = "https://target.example/p";
  for (const std::string html : {
           "<p>I read https://target.example/p today</p>",
           "<p><code>&lt;a href=\"https://target.example/p\"&gt;</code></p>",
           "<!-- <a href='https://target.example/p'>x</a> -->",
           "<script>document.write('<a href=\"https://target.example/p\">x</a>')</script>",
           "<script type=text/template><a href='https://target.example/p'>x</a></script>",
           "<style>a[href='https://target.example/p'] { color: red }</style>",
           "<template><a href='https://target.example/p'>x</a></template>",
           "<textarea><a href='https://target.example/p'>x</a></textarea>",
           "<title>https://target.example/p</title>",
       }) {
    EXPECT_FALSE(Links(html, t)) << html;
  }
}

TEST(LinkMatcherTest, NoscriptContentCounts) {
  // Lazy-loading markup puts the real image in <noscript>: what a reader without scripts sees.
  EXPECT_TRUE(
      Links("<img data-src='https://target.example/p.jpg'>"
            "<noscript><img src='https://target.example/p.jpg'></noscript>",
            "https://target.example/p.jpg"));
}

// ---- exactness ---------------------------------------------------------------------------------

TEST(LinkMatcherTest, PrefixesAndNeighboursNeverMatch) {
  const std::string t = "https://target.example/post-1";
  for (const std::string href : {
           "https://target.example/post-10",
           "https://target.example/post-1/",
           "https://target.example/post-1/comments",
           "https://target.example/post-",
           "https://target.example/post-1?x=1",
           "https://target.example/post-1?",
           "http://target.example/post-1",
           "https://target.example:8443/post-1",
           "https://www.target.example/post-1",
           "https://target.example.evil/post-1",
           "https://user@target.example/post-1",
           "https://target.example/Post-1",
           "https://target.example/post-1%20",
       }) {
    EXPECT_FALSE(Links(absl::StrCat("<a href='", href, "'>x</a>"), t)) << href;
  }
}

TEST(LinkMatcherTest, TrackingParametersAreNotStripped) {
  EXPECT_FALSE(
      Links("<a href='https://target.example/p?utm_source=x'>x</a>", "https://target.example/p"));
  EXPECT_FALSE(
      Links("<a href='https://target.example/p'>x</a>", "https://target.example/p?utm_source=x"));
  EXPECT_TRUE(Links("<a href='https://target.example/p?utm_source=x'>x</a>",
                    "https://target.example/p?utm_source=x"));
}

TEST(LinkMatcherTest, FragmentsAreIgnoredOnBothSides) {
  EXPECT_TRUE(
      Links("<a href='https://target.example/p#comments'>x</a>", "https://target.example/p"));
  EXPECT_TRUE(
      Links("<a href='https://target.example/p'>x</a>", "https://target.example/p#reply-7"));
  EXPECT_TRUE(Links("<a href='https://target.example/p#a'>x</a>", "https://target.example/p#b"));
  // A fragment-only link is the page itself.
  EXPECT_TRUE(Find("<a href='#top'>x</a>", kPage).found);
}

TEST(LinkMatcherTest, SchemeAndHostCaseAndOtherSpellingsWhatwgMakesEqual) {
  const std::string t = "https://target.example/a/post?q=1";
  EXPECT_TRUE(Links("<a href='HTTPS://TARGET.EXAMPLE/a/post?q=1'>x</a>", t));
  EXPECT_TRUE(Links("<a href='https://Target.Example:443/a/post?q=1'>x</a>", t));
  // A trailing dot names another host for WHATWG; so does a changed path case.
  EXPECT_FALSE(Links("<a href='https://target.example./a/post?q=1'>x</a>", t));
  EXPECT_FALSE(Links("<a href='https://target.example/A/post?q=1'>x</a>", t));
  for (const std::string href : {
           "https://target.example/a/./b/../post?q=1",
           "https://target.example/a/%2e/post?q=1",
           "https://t%61rget.example/a/post?q=1",
           "  https://target.example/a/post?q=1\n",
           "https:\\\\target.example\\a\\post?q=1",
           "https://target.example/a/po\tst?q=1",
       }) {
    EXPECT_TRUE(Links(absl::StrCat("<a href='", href, "'>x</a>"), t)) << href;
  }
  // The target is read the same way.
  EXPECT_TRUE(Links("<a href='https://target.example/a/post?q=1'>x</a>",
                    "HTTPS://target.EXAMPLE:443/a/b/../post?q=1"));
}

TEST(LinkMatcherTest, PercentEncodingAsWhatwgSerializesIt) {
  // Characters the serializer encodes compare equal to their encoded form...
  EXPECT_TRUE(Links("<a href='https://target.example/a b?c d'>x</a>",
                    "https://target.example/a%20b?c%20d"));
  EXPECT_TRUE(Links("<a href='https://target.example/caf\xC3\xA9'>x</a>",
                    "https://target.example/caf%C3%A9"));
  EXPECT_TRUE(
      Links("<a href='https://b\xC3\xBC"
            "cher.example/'>x</a>",
            "https://xn--bcher-kva.example/"));
  EXPECT_TRUE(
      Links("<a href='https://target.example/%c3%a9'>x</a>", "https://target.example/%c3%a9"));
  // ...and nothing else is decoded or re-encoded: a user's "%7E" is not "~", case of escapes kept.
  EXPECT_FALSE(
      Links("<a href='https://target.example/%7Euser'>x</a>", "https://target.example/~user"));
  EXPECT_FALSE(
      Links("<a href='https://target.example/%c3%a9'>x</a>", "https://target.example/%C3%A9"));
  EXPECT_FALSE(Links("<a href='https://target.example/a%2Fb'>x</a>", "https://target.example/a/b"));
}

// ---- resolving ---------------------------------------------------------------------------------

TEST(LinkMatcherTest, RelativeLinksResolveAgainstTheFinalUrl) {
  const std::string html =
      "<a href='../post-1'>x</a><img src='/img/a.png'><a href='//other.example/z'>";
  EXPECT_TRUE(Find(html, "https://source.example/post-1").found);
  EXPECT_TRUE(Find(html, "https://source.example/img/a.png").found);
  EXPECT_TRUE(Find(html, "https://other.example/z").found);
  // The same page served (after redirects) from elsewhere resolves elsewhere.
  EXPECT_FALSE(Find(html, "https://source.example/post-1", {}, "https://moved.example/a/b").found);
  EXPECT_TRUE(Find(html, "https://moved.example/post-1", {}, "https://moved.example/a/b").found);
}

TEST(LinkMatcherTest, BaseHrefOverridesTheFinalUrl) {
  const std::string html =
      "<head><base href='https://target.example/blog/'></head><a href='post-1'>x</a>";
  EXPECT_TRUE(Links(html, "https://target.example/blog/post-1"));
  EXPECT_FALSE(Links(html, "https://source.example/notes/post-1"));
  // A relative base resolves against the final URL; only the first <base href> counts.
  EXPECT_TRUE(Links("<base href='/other/'><base href='https://x.example/'><a href='p'>x</a>",
                    "https://source.example/other/p"));
  // A base that does not parse is ignored.
  EXPECT_TRUE(Links("<base href='https://exa mple.com/'><a href='p'>x</a>",
                    "https://source.example/notes/p"));
}

TEST(LinkMatcherTest, UnparseableAndOtherSchemeLinksAreSkipped) {
  EXPECT_TRUE(
      Links("<a href='javascript:alert(1)'>x</a><a href='mailto:a@b'>x</a>"
            "<a href='https://exa mple/'>x</a><a href='https://target.example/'>ok</a>",
            "https://target.example/"));
}

TEST(LinkMatcherTest, ResultIsTheSameAfterTheMf2ParserRewroteTheDocument) {
  // ParseMf2 rewrites relative URLs in the document it reads; matching after it agrees.
  HtmlDocument document = HtmlDocument::Parse(
      "<base href='/b/'><div class=h-entry><a class=u-in-reply-to href='../t/1'>r</a>"
      "<img src='x.png'><a href='#c'>c</a></div>");
  const url::Url page = U(kPage);
  ASSERT_TRUE(ParseMf2(document, page).ok());
  EXPECT_TRUE(FindLink(document, page, U("https://source.example/t/1")).found);
  EXPECT_TRUE(FindLink(document, page, U("https://source.example/b/x.png")).found);
  EXPECT_TRUE(FindLink(document, page, U("https://source.example/b/")).found);
}

TEST(LinkMatcherTest, EveryLinkThatParsesIsFoundWhenItIsTheTarget) {
  // The scan skips the full parse of links that surely name another host; whatever the spelling,
  // a link that parses to the target must still be found, and one on the target's host must
  // still reach the diagnostic.
  const std::string page = "https://source.example/notes/1";
  const url::Url base = U(page);
  for (const std::string href : {
           "https://target.example/p",
           "HTTPS://TARGET.EXAMPLE/p",
           "hTtP://Target.Example:80/p",
           "https://target.example./p",
           "//target.example/p",
           "\\\\target.example/p",
           "/\\target.example/p",
           "https:\\\\target.example\\p",
           "https:/target.example/p",
           "https:///target.example/p",
           "https:target.example/p",
           "http:target.example",
           "https://user:pass@target.example/p",
           "https://user@target.example/p",
           "https://target.example:443/p",
           "https://target.example:/p",
           "https://t%61rget.example/p",
           "https://TARGET%2eexample/p",
           "https://target\xE3\x80\x82"
           "example/p",
           "https://ｔａｒｇｅｔ.example/p",
           "https://xn--bcher-kva.example/",
           "https://bücher.example/",
           "https://0x7f.1/p",
           "https://127.0.0.1/p",
           "https://2130706433/",
           "https://1.2.3.4./p",
           "https://[::1]/p",
           "https://target.example#f",
           "https://target.example?q",
           "  https://target.example/p\x0c ",
           "https://tar\tget.example/p",
           "ht\ntps://target.example/p",
           "p",
           "/p",
           "?q",
           "#f",
           ".",
           "",
           "https:",
           "https://",
           "javascript:x",
           "mailto:a@target.example",
           "https://a_b.example/",
           "https://-target.example/",
           "https://target..example/",
           "https://example.123abc/",
           "https://example.0x1g/",
       }) {
    const absl::StatusOr<url::Url> parsed = url::ParseUrl(href, &base);
    if (!parsed.ok()) {
      continue;
    }
    const std::string html = absl::StrCat("<a href='x'>x</a><a href=\"", href, "\">x</a>");
    EXPECT_TRUE(Find(html, parsed->href(), {}, page).found) << href << " -> " << parsed->href();
    // Another resource on the same host: not found, but listed.
    const url::Url other = U(absl::StrCat(parsed->origin(), "/zzz-not-linked"));
    const LinkMatch miss = Find(html, other.href(), {}, page);
    EXPECT_FALSE(miss.found) << href;
    std::string without_fragment = parsed->href();
    without_fragment = without_fragment.substr(0, without_fragment.find('#'));
    EXPECT_THAT(miss.links_to_target_host, ::testing::Contains(without_fragment)) << href;
  }
}

// ---- microformats u-* --------------------------------------------------------------------------

TEST(LinkMatcherTest, UrlPropertiesCountWhateverElementCarriesThem) {
  const std::string t = "https://target.example/p";
  const struct {
    std::string html;
    std::string matched_by;
  } cases[] = {
      {"<div class=h-entry><data class=u-in-reply-to value='https://target.example/p'>re</data>",
       "u-in-reply-to"},
      {"<div class=h-entry><input class=u-like-of value='https://target.example/p'>", "u-like-of"},
      {"<div class=h-entry><abbr class=u-repost-of title='https://target.example/p'>it</abbr>",
       "u-repost-of"},
      {"<div class=h-entry><span class=u-bookmark-of> https://target.example/p </span>",
       "u-bookmark-of"},
      {"<div class=h-entry><span class=u-in-reply-to><b class=value>https://target.example/</b>"
       "<i>ignored</i><b class=value>p</b></span>",
       "u-in-reply-to"},
      {"<div class=h-entry><span class=u-in-reply-to><span class=value-title "
       "title='https://target.example/p'></span>x</span>",
       "u-in-reply-to"},
      {"<div class=h-entry><video class=u-video poster='https://target.example/p'></video>",
       "u-video"},
      {"<div class=h-entry><object class=u-photo data='https://target.example/p'></object>",
       "u-photo"},
      {"<div class=h-entry><iframe class=u-video src='https://target.example/p'></iframe>",
       "u-video"},
      // Relative values resolve like links.
      {"<div class=h-entry><data class=u-in-reply-to value='//target.example/p'></data>",
       "u-in-reply-to"},
      // A nested item's url.
      {"<div class=h-entry><div class='u-in-reply-to h-cite'>"
       "<data class=u-url value='https://target.example/p'></data></div>",
       "u-url"},
  };
  for (const auto& c : cases) {
    const LinkMatch match = Find(c.html, t);
    EXPECT_TRUE(match.found) << c.html;
    EXPECT_EQ(match.matched_by, c.matched_by) << c.html;
  }
}

TEST(LinkMatcherTest, OnlyUrlPropertiesOfAnItemCount) {
  const std::string t = "https://target.example/p";
  for (const std::string html : {
           // p-* and e-* text is text.
           "<div class=h-entry><span class=p-name>https://target.example/p</span></div>",
           "<div class=h-entry><div class=e-content>see https://target.example/p</div></div>",
           "<div class=h-entry><data class=p-in-reply-to value='https://target.example/p'></data>",
           // A u-* class outside any h-* root is no property.
           "<data class=u-in-reply-to value='https://target.example/p'></data>",
           // Script text inside a u-* element is not read.
           "<div class=h-entry><span class=u-url><script>https://target.example/p</script></span>",
           // Not a u-* class name.
           "<div class=h-entry><data class=U-url value='https://target.example/p'></data>",
       }) {
    EXPECT_FALSE(Links(html, t)) << html;
  }
}

TEST(LinkMatcherTest, ClassicMicroformatLinksCountLikeAnyLink) {
  EXPECT_TRUE(Links("<div class=hentry><a class=url href='https://target.example/p'>x</a></div>",
                    "https://target.example/p"));
}

// ---- scope -------------------------------------------------------------------------------------

TEST(LinkMatcherTest, WithAPostMarkedUpOnlyLinksInsideItCount) {
  const std::string html =
      "<nav><a href='https://target.example/'>blogroll</a></nav>"
      "<div class=h-entry><p class=e-content>hello <a href='https://target.example/in'>x</a></p>"
      "</div><footer><a href='https://target.example/after'>f</a>"
      "<div class=h-card><a class=u-url href='https://target.example/card'>me</a></div></footer>";
  const LinkMatch outside = Find(html, "https://target.example/");
  EXPECT_FALSE(outside.found);
  EXPECT_TRUE(outside.found_outside_post);
  EXPECT_THAT(outside.links_to_target_host,
              ElementsAre("https://target.example/in", "https://target.example/after",
                          "https://target.example/card"));
  EXPECT_TRUE(Links(html, "https://target.example/in"));
  EXPECT_FALSE(Links(html, "https://target.example/after"));
  EXPECT_FALSE(Links(html, "https://target.example/card"));  // an h-card is not the post

  LinkMatchOptions anywhere;
  anywhere.scope = LinkScope::kWholeDocument;
  EXPECT_TRUE(Find(html, "https://target.example/", anywhere).found);
  EXPECT_TRUE(Find(html, "https://target.example/card", anywhere).found);
}

TEST(LinkMatcherTest, ScopeHoldsWhenThePostComesAfterTheLink) {
  EXPECT_FALSE(Links("<a href='https://target.example/'>x</a><article class=h-entry>y</article>",
                     "https://target.example/"));
  EXPECT_FALSE(Links("<a href='https://target.example/'>x</a><p class=h-cite>y</p>",
                     "https://target.example/"));
}

TEST(LinkMatcherTest, LinkElementsCountAnywhere) {
  EXPECT_TRUE(
      Links("<head><link rel=in-reply-to href='https://target.example/'></head>"
            "<div class=h-entry>y</div>",
            "https://target.example/"));
}

TEST(LinkMatcherTest, WithoutAPostRootLinksCountAnywhere) {
  const std::string nav = "<nav><a href='https://target.example/'>x</a></nav>";
  EXPECT_TRUE(Links(nav, "https://target.example/"));
  EXPECT_TRUE(
      Links("<div class=h-card><p class=p-name>me</p></div>" + nav, "https://target.example/"));
  EXPECT_TRUE(Links("<div class=hentry><p class=entry-content>hi</p></div>" + nav,
                    "https://target.example/"));
  EXPECT_TRUE(Links("<div class=h-feed></div><div class='h-entryx'></div>" + nav,
                    "https://target.example/"));
}

// ---- the diagnostic ----------------------------------------------------------------------------

TEST(LinkMatcherTest, DiagnosticListsDistinctLinksToTheTargetHost) {
  const LinkMatch match = Find(
      "<a href='https://target.example/post-10'>a</a><a "
      "href='https://target.example/post-10#c'>b</a>"
      "<a href='https://other.example/post-1'>c</a><img src='http://TARGET.example:8080/i.png'>"
      "<a href='https://target.example/post-1x'>d</a>",
      "https://target.example/post-1");
  EXPECT_FALSE(match.found);
  EXPECT_EQ(match.matched_by, "");
  EXPECT_THAT(match.links_to_target_host,
              ElementsAre("https://target.example/post-10", "http://target.example:8080/i.png",
                          "https://target.example/post-1x"));
  EXPECT_FALSE(match.links_to_target_host_truncated);
  EXPECT_FALSE(match.found_outside_post);
  EXPECT_FALSE(match.scan_truncated);
  EXPECT_EQ(match.links_checked, 5u);
}

TEST(LinkMatcherTest, DiagnosticIsBounded) {
  std::string html;
  for (int i = 0; i < 30; ++i) {
    absl::StrAppend(&html, "<a href='https://target.example/p", i, "'>x</a>");
  }
  absl::StrAppend(&html, "<a href='https://target.example/", std::string(5000, 'x'), "'>x</a>");
  LinkMatch match = Find(html, "https://target.example/q");
  EXPECT_THAT(match.links_to_target_host, SizeIs(20));
  EXPECT_EQ(match.links_to_target_host.front(), "https://target.example/p0");
  EXPECT_TRUE(match.links_to_target_host_truncated);

  const std::string long_first =
      absl::StrCat("<a href='https://target.example/", std::string(5000, 'x'), "'>x</a>");
  match = Find(long_first, "https://target.example/q");
  ASSERT_THAT(match.links_to_target_host, SizeIs(1));
  EXPECT_EQ(match.links_to_target_host[0].size(), 2048u);
}

TEST(LinkMatcherTest, NoDiagnosticWhenFound) {
  const LinkMatch match =
      Find("<a href='https://target.example/a'>a</a><a href='https://target.example/p'>x</a>",
           "https://target.example/p");
  EXPECT_TRUE(match.found);
  EXPECT_THAT(match.links_to_target_host, IsEmpty());
}

// ---- limits ------------------------------------------------------------------------------------

TEST(LinkMatcherTest, StopsAtTheElementAndLinkLimitsAndSaysSo) {
  std::string html;
  for (int i = 0; i < 50; ++i) {
    absl::StrAppend(&html, "<a href='/n", i, "'>x</a>");
  }
  absl::StrAppend(&html, "<a href='https://target.example/p'>x</a>");
  EXPECT_TRUE(Find(html, "https://target.example/p").found);

  LinkMatchOptions few_links;
  few_links.max_links = 10;
  LinkMatch match = Find(html, "https://target.example/p", few_links);
  EXPECT_FALSE(match.found);
  EXPECT_TRUE(match.scan_truncated);
  EXPECT_EQ(match.links_checked, 10u);

  LinkMatchOptions few_elements;
  few_elements.max_elements = 20;
  match = Find(html, "https://target.example/p", few_elements);
  EXPECT_FALSE(match.found);
  EXPECT_TRUE(match.scan_truncated);
  EXPECT_EQ(match.elements_scanned, 20u);
}

TEST(LinkMatcherTest, DeepAndHugeDocumentsAreReadWithoutRecursion) {
  std::string html;
  // As deep as HtmlDocument keeps (kMaxElementDepth), each level a u-* property whose text is
  // read.
  for (int i = 0; i < kMaxElementDepth - 5; ++i) {
    html += "<div class='h-entry u-url'>";
  }
  html += "<a href='https://target.example/deep'>x</a>";
  const LinkMatch deep = Find(html, "https://target.example/deep");
  EXPECT_TRUE(deep.found) << "elements " << deep.elements_scanned << ", links "
                          << deep.links_checked << ", truncated " << deep.scan_truncated;
  // A u-* element whose text is a whole page is no URL (and is not read to the end).
  const std::string big = "<div class=h-entry><div class=u-url>" + std::string(100000, 'a') +
                          "</div><a href='https://target.example/b'>x</a></div>";
  EXPECT_TRUE(Links(big, "https://target.example/b"));
}

}  // namespace
}  // namespace portcullis::verifier::html
