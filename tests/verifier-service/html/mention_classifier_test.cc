#include "verifier-service/src/html/mention_classifier.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/shared_testdata.h"
#include "verifier-service/src/html/html_document.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPage[] = "https://alice.example/2024/reply";
constexpr char kTarget[] = "https://bob.example/post";

url::Url Url(const std::string& text) { return *url::ParseUrl(text); }

json::object Mf2(const std::string& html, const std::string& page = kPage) {
  absl::StatusOr<json::object> parsed = ParseMf2(html, page);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : json::object();
}

MentionEntry Classify(const std::string& html, const char* target = kTarget,
                      const EntryLimits& limits = {}) {
  const url::Url target_url = Url(target == nullptr ? kTarget : target);
  return ClassifyMention(Mf2(html), Url(kPage), target == nullptr ? nullptr : &target_url, limits);
}

// ---- the primary h-entry ------------------------------------------------------------------------

std::string PrimaryName(const std::string& html, const std::string& page = kPage) {
  const json::object mf2 = Mf2(html, page);
  const json::object* entry = FindPrimaryEntry(mf2, Url(page));
  if (entry == nullptr) {
    return "(none)";
  }
  return std::string(entry->at("properties").at("name").at(0).as_string());
}

TEST(MentionClassifierTest, PrimaryEntryIsTheOneNamingThePage) {
  EXPECT_EQ(PrimaryName(R"(<div class="h-entry"><p class="p-name">Other</p>
      <a class="u-url" href="/2024/other">o</a></div>
    <div class="h-entry"><p class="p-name">Mine</p>
      <a class="u-url" href="/2024/reply#top">m</a></div>)"),
            "Mine");
  // Inside an h-feed too.
  EXPECT_EQ(PrimaryName(R"(<div class="h-feed"><div class="h-entry"><p class="p-name">A</p></div>
      <div class="h-entry"><p class="p-name">B</p><a class="u-url" href="reply">b</a></div></div>)"),
            "B");
}

TEST(MentionClassifierTest, PrimaryEntryFallsBackToTheFirstTopLevelThenTheFeed) {
  EXPECT_EQ(PrimaryName(R"(<a class="h-card" href="/">Alice</a>
      <div class="h-entry"><p class="p-name">First</p></div>
      <div class="h-entry"><p class="p-name">Second</p></div>)"),
            "First");
  EXPECT_EQ(PrimaryName(R"(<div class="h-feed"><p class="p-name">Feed</p>
      <div class="h-entry"><p class="p-name">One</p></div>
      <div class="h-entry"><p class="p-name">Two</p></div></div>)"),
            "One");
  EXPECT_EQ(PrimaryName(R"(<div class="h-card"><p class="p-name">Card</p>
      <div class="h-entry"><p class="p-name">Nested</p></div></div>)"),
            "Nested");
  EXPECT_EQ(PrimaryName(R"(<div class="h-card"><p class="p-name">Only a card</p></div>)"),
            "(none)");
  // Classic markup reads as mf2.
  EXPECT_EQ(PrimaryName(R"(<div class="hentry"><h1 class="entry-title">Classic</h1></div>)"),
            "Classic");
}

// ---- the type -----------------------------------------------------------------------------------

TEST(MentionClassifierTest, TypeComesFromTheResponseProperty) {
  EXPECT_EQ(
      Classify(
          R"(<div class="h-entry"><a class="u-in-reply-to" href="https://bob.example/post">re</a>
      <p class="e-content">Nice post</p></div>)")
          .type,
      "reply");
  EXPECT_EQ(
      Classify(R"(<div class="h-entry"><a class="u-like-of" href="https://bob.example/post">x</a>
      <a class="p-author h-card" href="/">Al</a></div>)")
          .type,
      "like");
  EXPECT_EQ(
      Classify(
          R"(<div class="h-entry"><a class="u-repost-of" href="https://bob.example/post#c">x</a>
      </div>)")
          .type,
      "repost");
  EXPECT_EQ(
      Classify(
          R"(<div class="h-entry"><a class="u-bookmark-of" href="https://bob.example/post">x</a>
      </div>)")
          .type,
      "bookmark");
  EXPECT_EQ(Classify(R"(<div class="h-entry"><p class="e-content">See
      <a href="https://bob.example/post">this</a></p></div>)")
                .type,
            "mention");
  EXPECT_EQ(Classify("<p>No microformats, <a href=\"https://bob.example/post\">link</a></p>").type,
            "mention");
}

TEST(MentionClassifierTest, RsvpNeedsInReplyToAndAKnownValue) {
  const MentionEntry yes = Classify(R"(<div class="h-entry">
      <a class="u-in-reply-to" href="https://bob.example/post">event</a>
      <data class="p-rsvp" value=" YES ">I'll be there</data></div>)");
  EXPECT_EQ(yes.type, "rsvp");
  EXPECT_EQ(yes.rsvp, "yes");
  for (const char* value : {"no", "maybe", "Interested"}) {
    const MentionEntry entry = Classify(std::string(R"(<div class="h-entry">
        <a class="u-in-reply-to" href="https://bob.example/post">event</a>
        <data class="p-rsvp" value=")") +
                                        value + R"("></data></div>)");
    EXPECT_EQ(entry.type, "rsvp") << value;
    EXPECT_EQ(entry.rsvp, absl::AsciiStrToLower(value));
  }
  const MentionEntry odd = Classify(R"(<div class="h-entry">
      <a class="u-in-reply-to" href="https://bob.example/post">event</a>
      <data class="p-rsvp" value="perhaps"></data></div>)");
  EXPECT_EQ(odd.type, "reply");
  EXPECT_EQ(odd.rsvp, "");
  // rsvp without in-reply-to is no response to anything.
  EXPECT_EQ(Classify(R"(<div class="h-entry"><data class="p-rsvp" value="yes"></data>
      <a href="https://bob.example/post">event</a></div>)")
                .type,
            "mention");
}

TEST(MentionClassifierTest, WithATargetOnlyPropertiesPointingAtItCount) {
  // A reply to someone else that likes our target is a like of ours.
  const std::string reply_and_like = R"(<div class="h-entry">
      <a class="u-in-reply-to" href="https://carol.example/x">re</a>
      <a class="u-like-of" href="https://bob.example/post">like</a></div>)";
  EXPECT_EQ(Classify(reply_and_like).type, "like");
  // Without a target, the first property in post-type order wins.
  EXPECT_EQ(Classify(reply_and_like, nullptr).type, "reply");
  // A reply to someone else that mentions our target in its text mentions it.
  EXPECT_EQ(
      Classify(
          R"(<div class="h-entry"><a class="u-in-reply-to" href="https://carol.example/x">re</a>
      <p class="e-content">cf. <a href="https://bob.example/post">bob</a></p></div>)")
          .type,
      "mention");
  // /post-1 is not /post-10; a fragment is ignored.
  EXPECT_EQ(
      Classify(
          R"(<div class="h-entry"><a class="u-in-reply-to" href="https://bob.example/post-1">re</a>
      </div>)",
          "https://bob.example/post-10")
          .type,
      "mention");
  EXPECT_EQ(
      Classify(
          R"(<div class="h-entry"><a class="u-in-reply-to" href="https://bob.example/post#comments">re</a>
      </div>)",
          "https://bob.example/post#x")
          .type,
      "reply");
}

TEST(MentionClassifierTest, NestedCitationsPointAtTheTargetThroughTheirUrl) {
  EXPECT_EQ(Classify(R"(<div class="h-entry"><div class="u-in-reply-to h-cite">
      <a class="p-author h-card" href="https://bob.example/">Bob</a>
      <a class="u-url" href="https://bob.example/post">Bob's post</a></div>
      <p class="e-content">Agreed</p></div>)")
                .type,
            "reply");
  EXPECT_EQ(Classify(R"(<div class="h-entry"><div class="p-like-of h-cite">
      <p class="p-name">Bob's post</p><a class="u-url" href="https://bob.example/post">x</a>
      </div></div>)")
                .type,
            "like");
}

// ---- the fields ---------------------------------------------------------------------------------

TEST(MentionClassifierTest, ReadsNamePublishedUrlAndContent) {
  const MentionEntry entry = Classify(R"(<article class="h-entry">
      <h1 class="p-name">A   real
        title</h1>
      <time class="dt-published" datetime="2024-05-01T10:00:00+02:00">May 1</time>
      <a class="u-url" href="/2024/reply">permalink</a>
      <a class="u-in-reply-to" href="https://bob.example/post">in reply</a>
      <div class="e-content"><p>Great <b>post</b>, see <a href="/more" onclick=x()>more</a>.</p>
        <script>steal()</script></div></article>)");
  EXPECT_EQ(entry.type, "reply");
  EXPECT_EQ(entry.name, "A real title");
  EXPECT_EQ(entry.published, "2024-05-01T10:00:00+02:00");
  EXPECT_EQ(entry.url, "https://alice.example/2024/reply");
  EXPECT_EQ(entry.content_text, "Great post, see more.");
  EXPECT_EQ(absl::StripAsciiWhitespace(entry.content_html),
            "<p>Great <b>post</b>, see <a href=\"https://alice.example/more\" "
            "rel=\"nofollow noopener ugc\">more</a>.</p>");
  EXPECT_FALSE(entry.content_truncated);
}

TEST(MentionClassifierTest, NameThatRepeatsTheContentIsDropped) {
  // The implied name of a note is its whole text.
  EXPECT_EQ(Classify(R"(<div class="h-entry"><p class="e-content">Just a note</p></div>)").name,
            "");
  EXPECT_EQ(
      Classify(R"(<div class="h-entry"><p class="p-name e-content">Same text</p></div>)").name, "");
  // A shortened name (XRay's content-with-prefixed-name).
  EXPECT_EQ(Classify(R"(<div class="h-entry"><h2 class="p-name">This page has a link...</h2>
      <p class="e-content">This page has a link to <a href="https://bob.example/post">it</a>.</p>
      </div>)")
                .name,
            "");
  // A distinct one (content-with-distinct-name), and a name without content.
  EXPECT_EQ(Classify(R"(<div class="h-entry"><h2 class="p-name">Hello World</h2>
      <p class="e-content">This page has a link to <a href="https://bob.example/post">it</a>.</p>
      </div>)")
                .name,
            "Hello World");
  EXPECT_EQ(Classify(R"(<div class="h-entry"><h2 class="p-name">Hello World</h2></div>)").name,
            "Hello World");
}

TEST(MentionClassifierTest, UrlFallsBackToThePage) {
  EXPECT_EQ(Classify(R"(<div class="h-entry"><p class="e-content">x</p></div>)").url, kPage);
  EXPECT_EQ(Classify(R"(<div class="h-entry"><p class="p-url">javascript:alert(1)</p></div>)").url,
            kPage);
  EXPECT_EQ(Classify("<p>plain page</p>").url, kPage);
}

TEST(MentionClassifierTest, PlainTextContentIsEscapedAsHtml) {
  const MentionEntry entry =
      Classify(R"(<div class="h-entry"><p class="p-content">1 &lt; 2 &amp; <b>bold</b></p></div>)");
  EXPECT_EQ(entry.content_text, "1 < 2 & bold");
  EXPECT_EQ(entry.content_html, "1 &lt; 2 &amp; bold");
  const MentionEntry summary =
      Classify(R"(<div class="h-entry"><p class="p-summary">Only a <i>summary</i></p></div>)");
  EXPECT_EQ(summary.content_text, "Only a summary");
}

TEST(MentionClassifierTest, XssInTheSourceNeverReachesTheHtml) {
  const MentionEntry entry = Classify(R"html(<div class="h-entry"><div class="e-content">
      <script>alert(1)</script><img src=x onerror="alert(2)">
      <a href="javascript:alert(3)">click</a><svg onload=alert(4)></svg>
      <iframe src="https://evil.example/"></iframe></div></div>)html");
  EXPECT_THAT(entry.content_html, Not(HasSubstr("script")));
  EXPECT_THAT(entry.content_html, Not(HasSubstr("onerror")));
  EXPECT_THAT(entry.content_html, Not(HasSubstr("javascript")));
  EXPECT_THAT(entry.content_html, Not(HasSubstr("svg")));
  EXPECT_THAT(entry.content_html, Not(HasSubstr("iframe")));
  EXPECT_THAT(entry.content_html, HasSubstr("click"));
}

TEST(MentionClassifierTest, EveryFieldIsCapped) {
  std::string html = R"(<div class="h-entry"><h1 class="p-name">)" + std::string(3000, 'N') +
                     R"(</h1><time class="dt-published">)" + std::string(500, '2') +
                     R"(</time><div class="e-content"><p>)";
  for (int i = 0; i < 5000; ++i) {
    html += "word\xC3\xA9 ";
  }
  html += "</p></div></div>";
  EntryLimits limits;
  limits.max_text_bytes = 1000;
  limits.max_html_bytes = 500;
  const MentionEntry entry = Classify(html, kTarget, limits);
  EXPECT_LE(entry.name.size(), limits.max_name_bytes);
  EXPECT_FALSE(entry.name.empty());
  EXPECT_LE(entry.published.size(), limits.max_published_bytes);
  EXPECT_LE(entry.content_text.size(), 1000u);
  EXPECT_GT(entry.content_text.size(), 900u);
  EXPECT_LE(entry.content_html.size(), 500u);
  EXPECT_TRUE(absl::EndsWith(entry.content_html, "</p>"));
  EXPECT_TRUE(entry.content_truncated);
}

TEST(MentionClassifierTest, MalformedMf2JsonIsReadAsAbsent) {
  const json::object mf2 = json::parse(R"({"items": [{"type": ["h-entry"],
      "properties": {"in-reply-to": "https://bob.example/post", "content": [42],
                     "name": [{"no": "value"}], "url": [null]}}, 7]})")
                               .as_object();
  const url::Url target = Url(kTarget);
  const MentionEntry entry = ClassifyMention(mf2, Url(kPage), &target);
  EXPECT_EQ(entry.type, "mention");
  EXPECT_EQ(entry.name, "");
  EXPECT_EQ(entry.content_text, "");
  EXPECT_EQ(entry.url, kPage);
}

// With ParseMf2's sources the sanitizer reads the parsed e-content instead of parsing its html
// again; the entry is the same, on every page of the shared microformats-v2 suite and the XRay
// fixtures.
void ExpectSameWithSources(const std::string& html, const std::string& page) {
  HtmlDocument document = HtmlDocument::Parse(html);
  Mf2HtmlSources sources;
  absl::StatusOr<json::object> mf2 = ParseMf2(document, Url(page), {}, &sources);
  ASSERT_TRUE(mf2.ok()) << page;
  const MentionEntry with = ClassifyMention(*mf2, Url(page), nullptr, {}, &sources);
  const MentionEntry without = ClassifyMention(*mf2, Url(page), nullptr);
  EXPECT_EQ(with.content_html, without.content_html) << page;
  EXPECT_EQ(with.content_text, without.content_text) << page;
  EXPECT_EQ(with.content_truncated, without.content_truncated) << page;
  EXPECT_EQ(with.type, without.type) << page;
  EXPECT_EQ(with.name, without.name) << page;
}

TEST(MentionClassifierTest, ParsedContentGivesTheSameEntry) {
  ExpectSameWithSources(
      "<article class=h-entry><div class=e-content>\n<p>Hello <em>there</em> "
      "<a href=/x>link</a></p><section><h2>Part</h2><script>x()</script></section>\n</div>"
      "</article>",
      kPage);
  const std::filesystem::path root = std::filesystem::path(PORTCULLIS_SHARED_TESTDATA_DIR);
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(
      suite_readme, root / "mf2" / "README.md");
  int pages = 0;
  for (const char* dir : {"mf2", "authorship"}) {
    for (const auto& file : std::filesystem::recursive_directory_iterator(root / dir)) {
      const std::string path = file.path().string();
      if (!file.is_regular_file() ||
          (file.path().extension() != ".html" && !absl::StrContains(path, "source.example.com"))) {
        continue;
      }
      std::optional<std::string> html = testing::ReadFileIfPresent(file.path());
      ASSERT_TRUE(html.has_value()) << path;
      ExpectSameWithSources(*html, "http://example.com/" + file.path().filename().string());
      ++pages;
    }
  }
  EXPECT_GT(pages, 100);
}

// The XRay source fixtures (raw HTTP responses, read in place): every page classifies without
// trouble, and the response fixtures get the type XRay's own tests give them.
TEST(MentionClassifierTest, SharedXrayFixtures) {
  const std::filesystem::path dir = std::filesystem::path(PORTCULLIS_SHARED_TESTDATA_DIR) /
                                    "authorship" / "xray" / "source.example.com";
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(basictest, dir / "basictest");
  const std::map<std::string, std::string> expected_types = {
      {"reply-is-url", "reply"},
      {"reply-is-h-cite", "reply"},
      {"duplicate-in-reply-to-urls", "reply"},
      {"duplicate-like-of-urls", "like"},
      {"bookmark-missing-content", "bookmark"},
      {"basictest", "mention"},
      {"no-h-entry", "mention"},
      // rsvp without in-reply-to answers no event: a mention here (XRay reads rsvp alone).
      {"h-entry-rsvp", "mention"}};
  int pages = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) {
    const std::string name = file.path().filename().string();
    std::optional<std::string> raw = testing::ReadFileIfPresent(file.path());
    ASSERT_TRUE(raw.has_value()) << name;
    size_t body = raw->find("\r\n\r\n");
    body = body == std::string::npos ? raw->find("\n\n") : body;
    const std::string html =
        body == std::string::npos ? "" : raw->substr(raw->find('\n', body + 1) + 1);
    const std::string page = "http://source.example.com/" + name;
    const MentionEntry entry = ClassifyMention(Mf2(html, page), Url(page), nullptr);
    EXPECT_FALSE(entry.url.empty()) << name;
    EXPECT_THAT(entry.content_html, Not(HasSubstr("<script"))) << name;
    if (const auto it = expected_types.find(name); it != expected_types.end()) {
      EXPECT_EQ(entry.type, it->second) << name;
    }
    ++pages;
  }
  EXPECT_GT(pages, 60);
}

}  // namespace
}  // namespace portcullis::verifier::html
