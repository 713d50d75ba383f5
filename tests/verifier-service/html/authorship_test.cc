#include "verifier-service/src/html/authorship.h"

#include <string>

#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verifier-service/src/html/mention_classifier.h"
#include "verifier-service/src/html/mf2_parser.h"

namespace portcullis::verifier::html {

// How gtest prints an Author in a failure.
void PrintTo(const Author& a, std::ostream* os) {
  *os << "{name=" << a.name << ", url=" << a.url << ", photo=" << a.photo << ", note=" << a.note
      << "}";
}

namespace {

namespace json = boost::json;

constexpr char kPage[] = "https://alice.example/notes/1";

url::Url Url(const std::string& text) { return *url::ParseUrl(text); }

json::object Mf2(const std::string& html, const std::string& page = kPage) {
  absl::StatusOr<json::object> parsed = ParseMf2(html, page);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : json::object();
}

// FindAuthor on the primary h-entry of `html` served at kPage.
AuthorLookup Lookup(const std::string& html) {
  static json::object mf2;  // the entry points into it
  mf2 = Mf2(html);
  const json::object* entry = FindPrimaryEntry(mf2, Url(kPage));
  EXPECT_NE(entry, nullptr);
  return entry == nullptr ? AuthorLookup() : FindAuthor(mf2, *entry, Url(kPage));
}

Author Card(std::string name, std::string url, std::string photo = "", std::string note = "") {
  return Author{std::move(name), std::move(url), std::move(photo), std::move(note)};
}

// ---- FindAuthor ---------------------------------------------------------------------------------

TEST(AuthorshipTest, EntryAuthorHCardIsUsedAsItIs) {
  const AuthorLookup lookup = Lookup(R"(<div class="h-entry">
      <div class="p-author h-card"><a class="u-url" href="/">
        <img class="u-photo" src="/me.jpg" alt=""></a> <span class="p-name">Alice  A.</span>
        <p class="p-note">Writes
          things.</p></div>
      <p class="e-content">Hi</p></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Alice A.", "https://alice.example/",
                                 "https://alice.example/me.jpg", "Writes things."));
  EXPECT_EQ(lookup.author_page, "");
}

TEST(AuthorshipTest, PlainNameStringIsANameOnly) {
  const AuthorLookup lookup = Lookup(R"(<div class="h-entry"><span class="p-author">Alice</span>
      <p class="e-content">Hi</p></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Alice", ""));
}

// Issue 22: the page's own h-card whose url is the author's URL is the author, without fetching
// the author page (as XRay).
TEST(AuthorshipTest, UrlAuthorWithItsHCardOnThePageNeedsNoAuthorPage) {
  const AuthorLookup lookup =
      Lookup(R"(<div class="h-entry"><a class="u-author" href="/about">me</a>
      <p class="e-content">Hi</p></div>
      <div class="h-card"><a class="u-url" href="/about">Alice</a></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Alice", "https://alice.example/about"));
  EXPECT_EQ(lookup.author_page, "");
}

TEST(AuthorshipTest, PlainUrlPAuthorWithItsHCardOnThePageNeedsNoAuthorPage) {
  const AuthorLookup lookup = Lookup(R"(<header class="h-card">
        <img class="u-photo" src="/me.jpg" alt=""><a class="p-name u-url" href="/">Alice</a>
      </header>
      <div class="h-entry"><span class="p-author">https://alice.example/</span>
      <p class="e-content">Hi</p></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Alice", "https://alice.example/", "https://alice.example/me.jpg"));
  EXPECT_EQ(lookup.author_page, "");
}

TEST(AuthorshipTest, RelAuthorWithItsHCardOnThePageNeedsNoAuthorPage) {
  const AuthorLookup lookup = Lookup(R"(<link rel="author" href="/about">
      <div class="h-card"><a class="u-url p-name" href="/">Home</a></div>
      <div class="h-card"><a class="u-url p-name" href="/about">Alice</a></div>
      <div class="h-entry"><p class="e-content">Hi</p></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Alice", "https://alice.example/about"));
  EXPECT_EQ(lookup.author_page, "");
}

TEST(AuthorshipTest, UrlAuthorNeedsTheAuthorPage) {
  // The page's only h-card is someone else's (another url): the author page is fetched.
  const AuthorLookup lookup =
      Lookup(R"(<div class="h-entry"><a class="u-author" href="/about">me</a>
      <p class="e-content">Hi</p></div>
      <div class="h-card"><a class="u-url p-name" href="https://bob.example/">Bob</a></div>)");
  EXPECT_FALSE(lookup.author.has_value());
  EXPECT_EQ(lookup.author_page, "https://alice.example/about");
  EXPECT_EQ(lookup.fallback, Card("", "https://alice.example/about"));
}

TEST(AuthorshipTest, ABareMatchingHCardStillNeedsTheAuthorPage) {
  // An h-card with the author's url and nothing else says nothing the url does not: fetch.
  const AuthorLookup lookup =
      Lookup(R"(<div class="h-entry"><a class="u-author" href="/about">me</a>
      <p class="e-content">Hi</p></div>
      <div class="h-card"><a class="u-url" href="/about"></a></div>)");
  EXPECT_FALSE(lookup.author.has_value());
  EXPECT_EQ(lookup.author_page, "https://alice.example/about");
  EXPECT_EQ(lookup.fallback.url, "https://alice.example/about");
  EXPECT_EQ(lookup.fallback.name, "");
}

TEST(AuthorshipTest, HCardWithOnlyAUrlNeedsTheAuthorPage) {
  const AuthorLookup lookup =
      Lookup(R"(<div class="h-entry"><a class="u-author h-card" href="/"></a>
      <p class="e-content">Hi</p></div>)");
  EXPECT_FALSE(lookup.author.has_value());
  EXPECT_EQ(lookup.author_page, "https://alice.example/");
  EXPECT_EQ(lookup.fallback, Card("", "https://alice.example/"));
}

TEST(AuthorshipTest, FeedAuthorAppliesToItsEntries) {
  const std::string html = R"(<div class="h-feed">
      <a class="p-author h-card" href="https://alice.example/">Alice</a>
      <div class="h-entry"><p class="e-content">One</p></div>
      <div class="h-entry"><p class="e-content">Two</p></div></div>)";
  const json::object mf2 = Mf2(html);
  const json::object& second = mf2.at("items").at(0).at("children").at(1).as_object();
  const AuthorLookup lookup = FindAuthor(mf2, second, Url(kPage));
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Alice", "https://alice.example/"));
}

TEST(AuthorshipTest, EntryAuthorWinsOverTheFeedsAndRelAuthor) {
  const AuthorLookup lookup = Lookup(R"(<link rel="author" href="/rel-author">
      <div class="h-feed"><a class="p-author h-card" href="/feed">Feed</a>
      <div class="h-entry"><a class="p-author h-card" href="/bob">Bob</a></div></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(lookup.author->name, "Bob");
}

TEST(AuthorshipTest, RelAuthorIsTheLastResort) {
  const AuthorLookup lookup = Lookup(R"html(<link rel="author" href="javascript:alert(1)">
      <a rel="author" href="/who">who</a>
      <div class="h-entry"><p class="e-content">Hi</p></div>)html");
  EXPECT_FALSE(lookup.author.has_value());
  EXPECT_EQ(lookup.author_page, "https://alice.example/who");
  EXPECT_EQ(lookup.fallback, Card("", "https://alice.example/who"));
}

TEST(AuthorshipTest, NoAuthorAnywhere) {
  const AuthorLookup lookup = Lookup(R"(<div class="h-entry"><p class="e-content">Hi</p></div>)");
  EXPECT_FALSE(lookup.author.has_value());
  EXPECT_EQ(lookup.author_page, "");
}

TEST(AuthorshipTest, UnsafeUrlsInTheCardAreDropped) {
  const AuthorLookup lookup = Lookup(R"(<div class="h-entry"><div class="p-author h-card">
      <span class="p-name">Mallory</span><span class="u-url">javascript:alert(1)</span>
      <span class="u-photo">data:image/png;base64,AAA</span></div></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(*lookup.author, Card("Mallory", ""));
}

TEST(AuthorshipTest, AuthorFieldsAreCapped) {
  const AuthorLookup lookup = Lookup(R"(<div class="h-entry"><div class="p-author h-card">
      <span class="p-name">)" + std::string(2000, 'n') +
                                     R"(</span><p class="p-note">)" + std::string(5000, 'x') +
                                     R"(</p></div></div>)");
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(lookup.author->name.size(), AuthorLimits().max_name_bytes);
  EXPECT_EQ(lookup.author->note.size(), AuthorLimits().max_note_bytes);
}

TEST(AuthorshipTest, AuthorStringThatIsAUrlButRefusedIsAName) {
  const json::object mf2 = json::parse(R"({"items": [{"type": ["h-entry"],
      "properties": {"author": ["https://"]}}]})")
                               .as_object();
  const AuthorLookup lookup = FindAuthor(mf2, mf2.at("items").at(0).as_object(), Url(kPage));
  ASSERT_TRUE(lookup.author.has_value());
  EXPECT_EQ(lookup.author->name, "https://");
}

// ---- AuthorFromPage -----------------------------------------------------------------------------

constexpr char kAuthorPage[] = "https://alice.example/about";

std::optional<Author> FromPage(const std::string& html, const std::string& final_url = "") {
  return AuthorFromPage(Mf2(html, final_url.empty() ? kAuthorPage : final_url), kAuthorPage,
                        final_url);
}

TEST(AuthorshipTest, AuthorPageCardWithUrlEqualUidEqualPage) {
  EXPECT_EQ(FromPage(R"(<div class="h-card"><a class="u-url" rel="me" href="/about">Wrong</a></div>
      <div class="h-card"><a class="u-url u-uid" href="/about">Right</a></div>)"),
            Card("Right", kAuthorPage));
}

TEST(AuthorshipTest, AuthorPageCardWhoseUrlIsRelMe) {
  EXPECT_EQ(FromPage(R"(<link rel="me" href="https://alice.example/">
      <div class="h-card"><a class="u-url" href="/elsewhere">Wrong</a></div>
      <div class="h-card"><a class="u-url" href="/">Right</a></div>)"),
            Card("Right", "https://alice.example/"));
}

TEST(AuthorshipTest, AuthorPageCardWhoseUrlIsThePage) {
  EXPECT_EQ(FromPage(R"(<div class="h-card"><a class="u-url" href="/x">Wrong</a></div>
      <div class="h-card"><a class="u-url" href="https://alice.example/about">
        <img class="u-photo" src="/me.png" alt="">Right</a></div>)"),
            Card("Right", kAuthorPage, "https://alice.example/me.png"));
}

TEST(AuthorshipTest, AuthorPageOnlyCard) {
  EXPECT_EQ(FromPage(R"(<div class="h-card"><span class="p-name">Only</span></div>)"),
            Card("Only", kAuthorPage));
  EXPECT_EQ(FromPage(R"(<div class="h-card"><span class="p-name">A</span></div>
      <div class="h-card"><span class="p-name">B</span></div>)"),
            std::nullopt);
  EXPECT_EQ(FromPage("<p>no cards</p>"), std::nullopt);
}

TEST(AuthorshipTest, AuthorPageAfterARedirectMatchesTheFinalUrl) {
  EXPECT_EQ(FromPage(R"(<div class="h-card"><a class="u-url" href="/x">Wrong</a></div>
      <div class="h-card"><a class="u-url u-uid" href="https://www.alice.example/">Right</a></div>)",
                     "https://www.alice.example/"),
            Card("Right", "https://www.alice.example/"));
}

TEST(AuthorshipTest, AuthorPageWithAnUnusableUrlGivesNothing) {
  EXPECT_EQ(AuthorFromPage(json::object(), "not a url"), std::nullopt);
}

}  // namespace
}  // namespace portcullis::verifier::html
