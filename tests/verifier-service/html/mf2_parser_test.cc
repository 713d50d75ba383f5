#include "verifier-service/src/html/mf2_parser.h"

#include <chrono>
#include <optional>
#include <string>

#include "boost/json/parse.hpp"
#include "boost/json/serialize.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::html {
namespace {

namespace json = boost::json;

json::object Parse(const std::string& html, const std::string& url = "http://example.com/") {
  absl::StatusOr<json::object> parsed = ParseMf2(html, url);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : json::object{};
}

// The properties of the first item.
json::value Properties(const std::string& html, const std::string& url = "http://example.com/") {
  const json::object parsed = Parse(html, url);
  if (parsed.at("items").as_array().empty()) {
    return nullptr;
  }
  return parsed.at("items").at(0).at("properties");
}

MATCHER_P(JsonEq, expected, "") {
  const json::value want = json::parse(expected);
  *result_listener << json::serialize(arg);
  return arg == want;
}

TEST(Mf2ParserTest, EmptyAndGarbageInputGiveNoItems) {
  for (const std::string& input : {std::string(), std::string("\xff\xfe\0<<>", 6),
                                   std::string("<div class='h-'>x</div><p class=hentryx>")}) {
    EXPECT_THAT(json::value(Parse(input)), JsonEq(R"({"items": [], "rels": {}, "rel-urls": {}})"));
  }
}

TEST(Mf2ParserTest, RefusesADocumentUrlThatIsNotHttp) {
  EXPECT_EQ(ParseMf2("<p>x</p>", "/relative").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMf2("<p>x</p>", "file:///etc/passwd").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Mf2ParserTest, ValueClassConcatenatesParts) {
  EXPECT_THAT(Properties(R"(<div class="h-card"><p class="p-name"><span class="value">Jo</span>
                 <em>ignored</em><span class="value">hn</span></p>
                 <abbr class="p-tel value-title" title="+1 555"><span class=value-title title="+1 555">x</span></abbr></div>)"),
              JsonEq(R"({"name": ["John"], "tel": ["+1 555"]})"));
}

// Value parts are not looked for inside another part, property or microformat; data, abbr and
// img parts give their value, title and alt, even when empty.
TEST(Mf2ParserTest, ValueClassPartsAreTheSpecsParts) {
  EXPECT_THAT(Properties(R"(<div class="h-test"><p class="p-x"><span class="value">A<span
      class="value">B</span></span><span class="p-y"><span class="value">C</span></span><data
      class="value" value="D">no</data><abbr class="value" title="">no</abbr><img class="value"
      alt="E"><span class="h-z"><span class="value">no</span></span></p></div>)"),
              JsonEq(R"({"x": ["ABDE"], "y": ["C"]})"));
}

TEST(Mf2ParserTest, ValueClassJoinsDateAndTime) {
  EXPECT_THAT(Properties(R"(<div class="h-event"><p class=p-name>E</p>
        <span class="dt-start"><time class="value">7pm</time> on <time class="value" datetime="2024-03-01">March 1st</time></span>
        <span class="dt-end"><span class="value">21:30</span></span>
        <span class="dt-updated"><span class=value>2024-03-02</span><span class=value>10:00:00</span><span class=value>+01:00</span></span>
      </div>)"),
              JsonEq(R"({"name": ["E"], "start": ["2024-03-01 19:00"], "end": ["2024-03-01 21:30"],
                 "updated": ["2024-03-02 10:00:00 +0100"]})"));
}

TEST(Mf2ParserTest, ImpliesNamePhotoAndUrl) {
  EXPECT_THAT(Properties(R"(<a class="h-card" href="/ann"><img src="ann.jpg" alt="Ann"></a>)"),
              JsonEq(R"({"name": ["Ann"], "url": ["http://example.com/ann"],
                         "photo": [{"value": "http://example.com/ann.jpg", "alt": "Ann"}]})"));
  EXPECT_THAT(Properties(R"(<div class="h-card"> <span>Bob <script>no()</script></span> </div>)"),
              JsonEq(R"({"name": ["Bob"]})"));
  EXPECT_THAT(Properties(R"(<abbr class="h-card" title="Carol Ann">CA</abbr>)"),
              JsonEq(R"({"name": ["Carol Ann"]})"));
  // The child rules need an only child; an alt is trimmed; an image without src is no photo.
  EXPECT_THAT(Properties(R"(<div class="h-card"><hr><img alt="Alt"> Valid</div>)"),
              JsonEq(R"({"name": ["Alt Valid"]})"));
  EXPECT_THAT(Properties(R"(<img class="h-card h-1" alt=" Do Trim ">)"),
              JsonEq(R"({"name": ["Do Trim"]})"));
  EXPECT_THAT(
      json::value(Parse(R"(<img class="h-card h-1 h-card" alt="x">)").at("items").at(0).at("type")),
      JsonEq(R"(["h-card"])"));
  // An explicit p-* property stops the implied name; a nested microformat stops all three.
  EXPECT_THAT(Properties(R"(<a class="h-card" href="/d"><span class="p-nickname">D</span></a>)"),
              JsonEq(R"({"nickname": ["D"], "url": ["http://example.com/d"]})"));
  EXPECT_THAT(Properties(R"(<a class="h-entry" href="/e"><span class="h-card">F</span></a>)"),
              JsonEq(R"({})"));
}

TEST(Mf2ParserTest, ResolvesUrlsAgainstBaseHref) {
  const json::object parsed = Parse(
      R"(<html><head><base href="/blog/"><link rel="me" href="me"></head><body>
         <div class="h-entry"><a class="u-url" href="post-1">x</a>
         <a class="u-syndication" href="mailto:me@example.org">m</a>
         <a class="u-in-reply-to" href="https://other.example/p?q#f">r</a>
         <div class="e-content">See <a href="../other">this</a><img src="//cdn.example/i.png"></div>
         </div></body></html>)",
      "https://site.example/a/b");
  EXPECT_THAT(parsed.at("items").at(0).at("properties"),
              JsonEq(R"({"url": ["https://site.example/blog/post-1"],
                         "syndication": ["mailto:me@example.org"],
                         "in-reply-to": ["https://other.example/p?q#f"],
                         "content": [{"value": "See this https://cdn.example/i.png",
                                      "html": "See <a href=\"https://site.example/other\">this</a><img src=\"https://cdn.example/i.png\">"}]})"));
  EXPECT_THAT(parsed.at("rels"), JsonEq(R"({"me": ["https://site.example/blog/me"]})"));
  EXPECT_THAT(parsed.at("rel-urls"),
              JsonEq(R"({"https://site.example/blog/me": {"rels": ["me"], "text": ""}})"));
}

TEST(Mf2ParserTest, DocumentBaseUrl) {
  const absl::StatusOr<url::Url> final_url = url::ParseUrl("https://site.example/a/b?q");
  ASSERT_TRUE(final_url.ok());
  EXPECT_EQ(DocumentBaseUrl(HtmlDocument::Parse("<p>no base</p>"), *final_url).href(),
            "https://site.example/a/b?q");
  EXPECT_EQ(
      DocumentBaseUrl(HtmlDocument::Parse("<base target=_top><base href='../c/'>"), *final_url)
          .href(),
      "https://site.example/c/");
  EXPECT_EQ(DocumentBaseUrl(HtmlDocument::Parse("<base href='http://[bad'>"), *final_url).href(),
            "https://site.example/a/b?q");
}

TEST(Mf2ParserTest, ScriptAndStyleAreNotText) {
  EXPECT_THAT(Properties(R"(<div class="h-entry"><p class="p-name">A<style>p{}</style>B</p>
                            <div class="e-content">C<script>alert(1)</script></div></div>)"),
              JsonEq(R"({"name": ["AB"],
                         "content": [{"value": "C", "html": "C<script>alert(1)</script>"}]})"));
}

// An explicit u-* property (here u-photo) stops the implied url, as the spec says; an empty alt
// still makes the photo an object.
TEST(Mf2ParserTest, WebmentionShapedEntry) {
  const json::object parsed = Parse(R"(
    <article class="h-entry">
      <a class="p-author h-card" href="https://ann.example/"><img class="u-photo" src="/ann.jpg" alt="">Ann</a>
      <a class="u-in-reply-to" href="https://target.example/post-1">in reply to</a>
      <a class="u-like-of u-repost-of" href="https://target.example/post-2">like</a>
      <data class="p-rsvp" value="yes">Going</data>
      <time class="dt-published" datetime="2024-05-01T10:00:00Z">May 1</time>
      <div class="e-content">Great <b>post</b>!</div>
      <div class="u-comment h-cite"><a class="u-url p-name" href="/c">C</a></div>
    </article>)",
                                    "https://source.example/reply");
  EXPECT_THAT(parsed.at("items").at(0), JsonEq(R"({"type": ["h-entry"], "properties": {
      "author": [{"type": ["h-card"], "properties": {
                  "photo": [{"value": "https://source.example/ann.jpg", "alt": ""}],
                  "name": ["Ann"]}, "value": "Ann"}],
      "in-reply-to": ["https://target.example/post-1"],
      "like-of": ["https://target.example/post-2"],
      "repost-of": ["https://target.example/post-2"],
      "rsvp": ["yes"],
      "published": ["2024-05-01T10:00:00Z"],
      "content": [{"value": "Great post!", "html": "Great <b>post</b>!"}],
      "comment": [{"type": ["h-cite"], "properties": {"url": ["https://source.example/c"],
                   "name": ["C"]}, "value": "https://source.example/c"}]}})"));
}

TEST(Mf2ParserTest, NestedUrlValuesAreUrls) {
  EXPECT_THAT(Properties(R"(<div class="h-x"><p class="p-name">N</p>
      <div class="u-in-reply-to h-cite">Va<span class="p-1">l</span>id</div></div>)"),
              JsonEq(R"({"name": ["N"], "in-reply-to": [{"type": ["h-cite"],
                  "properties": {"name": ["Valid"]}, "value": "http://example.com/Valid"}]})"));
}

TEST(Mf2ParserTest, ChildrenAndIds) {
  EXPECT_THAT(json::value(Parse(R"(<div class="h-feed" id="f"><p class="p-name">F</p>
      <div class="h-entry"><p class="p-name">One</p></div></div>)")
                              .at("items")),
              JsonEq(R"([{"type": ["h-feed"], "id": "f", "properties": {"name": ["F"]},
                          "children": [{"type": ["h-entry"], "properties": {"name": ["One"]}}]}])"));
}

TEST(Mf2ParserTest, BackcompatHentryAndVcard) {
  const json::object parsed = Parse(R"(
    <div class="hentry">
      <h1 class="entry-title">Title</h1>
      <span class="author vcard"><a class="url fn" href="/ann">Ann</a><img class="photo" src="/a.png" alt="A"></span>
      <abbr class="published" title="2024-01-02T03:04:05Z">Jan 2</abbr>
      <time class="updated" datetime="2024-01-03">Jan 3</time>
      <p class="entry-summary">Sum</p>
      <div class="entry-content"><p>Body</p></div>
      <a rel="tag" href="/tags/c">c</a> <a rel="bookmark" href="/p/1">link</a>
    </div>)");
  EXPECT_THAT(parsed.at("items").at(0), JsonEq(R"({"type": ["h-entry"], "properties": {
      "name": ["Title"],
      "author": [{"type": ["h-card"], "properties": {"url": ["http://example.com/ann"],
                  "name": ["Ann"], "photo": ["http://example.com/a.png"]}, "value": "Ann"}],
      "published": ["2024-01-02T03:04:05Z"],
      "updated": ["2024-01-03"],
      "summary": ["Sum"],
      "content": [{"value": "Body", "html": "<p>Body</p>"}],
      "category": ["c"],
      "url": ["http://example.com/p/1"]}})"));
  EXPECT_THAT(parsed.at("rels"), JsonEq(R"({"tag": ["http://example.com/tags/c"],
                                            "bookmark": ["http://example.com/p/1"]})"));
}

TEST(Mf2ParserTest, RelUrlsCollectAttributesAndDeduplicate) {
  const json::object parsed = Parse(
      R"(<link rel="alternate feed" href="/feed" type="application/atom+xml" title="Feed">
         <a rel="feed" href="/feed" hreflang="en">Feed <img alt="icon"></a>
         <a rel="nofollow" href="/x" media="screen"></a>)");
  EXPECT_THAT(parsed.at("rels"), JsonEq(R"({"alternate": ["http://example.com/feed"],
                         "feed": ["http://example.com/feed"],
                         "nofollow": ["http://example.com/x"]})"));
  EXPECT_THAT(parsed.at("rel-urls"), JsonEq(R"({
      "http://example.com/feed": {"rels": ["alternate", "feed"], "text": "Feed icon",
                                  "type": "application/atom+xml", "title": "Feed",
                                  "hreflang": "en"},
      "http://example.com/x": {"rels": ["nofollow"], "text": "", "media": "screen"}})"));
}

TEST(Mf2ParserTest, DeepNestingIsCappedNotFatal) {
  std::string input = "<div class=h-entry><p class=p-name>deep</p>";
  for (int i = 0; i < 100000; ++i) {
    input += "<div class='h-card p-author'>";
  }
  const auto start = std::chrono::steady_clock::now();
  const json::object parsed = Parse(input);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(parsed.at("items").at(0).at("properties").at("name").at(0), "deep");
}

// 512 nested properties over 900 KB of text would repeat that text at every level.
TEST(Mf2ParserTest, OutputIsBounded) {
  std::string input = "<div class=h-entry>";
  for (int i = 0; i < 600; ++i) {
    input += "<div class='h-card p-author'>";
  }
  input += std::string(900000, 'x');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ParseMf2(input, "http://example.com/").status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // The same page within a larger budget parses.
  EXPECT_TRUE(ParseMf2(input.substr(0, 20000), "http://example.com/").ok());
  EXPECT_EQ(
      ParseMf2("<p class=h-card>0123456789</p>", "http://example.com/", {.max_output_bytes = 5})
          .status()
          .code(),
      absl::StatusCode::kResourceExhausted);
}

TEST(Mf2ParserTest, AOneMebibytePageCompletes) {
  std::string input = "<!doctype html><html><body><div class=h-feed>";
  int entries = 0;
  while (input.size() < (1u << 20)) {
    input += "<article class=h-entry><h2 class=p-name>Post</h2><a class=u-url href=/p/" +
             std::to_string(entries++) +
             ">x</a><div class=e-content><p>Some <a href=/x>text</a> &amp; more</p></div>"
             "<span class='p-author h-card'><img class=u-photo src=/a.png>Ann</span></article>\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const json::object parsed = Parse(input);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(parsed.at("items").at(0).at("children").as_array().size(),
            static_cast<size_t>(entries));
}

// A parse notes what each element is on the document (and resolves its URLs in place): parsing the
// same document again reads the same microformats, and a result outlives the document and the
// parser (its values live in memory of its own).
TEST(Mf2ParserTest, ParsingADocumentAgainGivesTheSameResult) {
  std::optional<json::object> first;
  std::string second;
  {
    HtmlDocument document = HtmlDocument::Parse(
        "<article class=h-entry><a class='p-author h-card' href=/alice>Alice</a>"
        "<img class=u-photo src=a.jpg alt=''><div class=e-content><p>Hi <a href=x>x</a></p></div>"
        "<div class=hentry><span class=entry-title>Classic</span><a rel=tag href=/t>t</a></div>"
        "</article><a rel=me href=https://social.example/@a>me</a>");
    const url::Url url = *url::ParseUrl("http://example.com/notes/1");
    absl::StatusOr<json::object> parsed = ParseMf2(document, url);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    first = *std::move(parsed);
    parsed = ParseMf2(document, url);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    second = json::serialize(*parsed);
  }
  EXPECT_EQ(json::serialize(*first), second);
  const json::object& properties = first->at("items").at(0).at("properties").as_object();
  EXPECT_EQ(properties.at("author").at(0).at("value"), "Alice");
  EXPECT_EQ(properties.at("photo").at(0).at("value"), "http://example.com/notes/a.jpg");
  EXPECT_EQ(first->at("items").at(0).at("children").at(0).at("type").at(0), "h-entry");
  EXPECT_EQ(first->at("rels").at("me").at(0), "https://social.example/@a");
}

// Mf2HtmlSources: every e-* html of the result (e-content, a nested microformat's e-* html) is
// found by its content, with the element whose children it serializes and what was trimmed.
TEST(Mf2ParserTest, RecordsWhereEachEmbeddedHtmlComesFrom) {
  HtmlDocument document = HtmlDocument::Parse(
      "<article class=h-entry><div class=e-content>\n  <p>Hi <a href=/x>there</a></p> \n</div>"
      "<div class='e-comment h-cite'><b>quoted</b></div><p class=e-summary></p></article>");
  Mf2HtmlSources sources;
  absl::StatusOr<json::object> parsed =
      ParseMf2(document, *url::ParseUrl("http://example.com/post"), {}, &sources);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const json::object& properties =
      parsed->at("items").at(0).at("properties").as_object();
  int found = 0;
  for (const char* name : {"content", "comment", "summary"}) {
    const json::value& value = properties.at(name).at(0);
    const json::string& html = value.at("html").as_string();
    const HtmlFragment* fragment = sources.Find(absl::string_view(html.data(), html.size()));
    ASSERT_NE(fragment, nullptr) << name;
    const std::string serialized = SerializeChildren(*fragment->parent);
    ASSERT_LE(fragment->trim_front + fragment->trim_back, serialized.size()) << name;
    EXPECT_EQ(serialized.substr(fragment->trim_front,
                                serialized.size() - fragment->trim_front - fragment->trim_back),
              absl::string_view(html.data(), html.size()))
        << name;
    ++found;
  }
  EXPECT_EQ(found, 3);
  const json::string& content = properties.at("content").at(0).at("html").as_string();
  const HtmlFragment* fragment = sources.Find(absl::string_view(content.data(), content.size()));
  ASSERT_NE(fragment, nullptr);
  EXPECT_EQ(fragment->trim_front, 3u);
  EXPECT_EQ(fragment->trim_back, 2u);
  EXPECT_EQ(fragment->parent->tag, "div");
  // Links were resolved in the tree before it was serialized.
  EXPECT_EQ(absl::string_view(content.data(), content.size()),
            "<p>Hi <a href=\"http://example.com/x\">there</a></p>");
  EXPECT_EQ(sources.Find("<p>Hi</p>"), nullptr);
}

}  // namespace
}  // namespace portcullis::verifier::html
