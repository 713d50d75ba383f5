// Issue 22, pages as they really are: SourceVerifier with the real HtmlSourceAnalyzer over a
// fetcher that serves scripted pages (bytes and Content-Type) and counts what it is asked for.
//   - Authorship without needless fetches: an entry whose author is a URL is given the page's own
//     h-card for that URL without fetching the author page; without one the author page is
//     fetched, once.
//   - Encodings: pages (and author pages) are decoded as browsers decode them before links are
//     matched and text is stored; what is stored is valid UTF-8.

#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "verifier-service/src/html/encoding_sniffer.h"
#include "verifier-service/src/verification/html_source_analyzer.h"
#include "verifier-service/src/verification/page_fetcher.h"
#include "verifier-service/src/verification/source_verifier.h"

namespace portcullis::verifier::html {
namespace {

using queue::VerificationOutcome;

constexpr char kSource[] = "https://alice.example/notes/1";
constexpr char kTarget[] = "https://bob.example/post";
constexpr char kAuthorPage[] = "https://alice.example/about";

class CountingFetcher final : public verification::PageFetcher {
 public:
  fetch::FetchResult Fetch(absl::string_view url, const fetch::FetchLimits&) override {
    absl::MutexLock lock(&mu_);
    calls_.emplace_back(url);
    fetch::FetchResult result;
    const auto it = pages_.find(std::string(url));
    if (it == pages_.end()) {
      result.outcome = fetch::FetchOutcome::kHttp4xx;
      result.status = 404;
      return result;
    }
    result.final_url = std::string(url);
    result.status = 200;
    result.content_type = it->second.content_type;
    result.body = it->second.body;
    return result;
  }

  void Serve(std::string url, std::string body,
             std::string content_type = "text/html; charset=utf-8") {
    absl::MutexLock lock(&mu_);
    pages_[std::move(url)] = {std::move(body), std::move(content_type)};
  }
  int FetchesOf(absl::string_view url) {
    absl::MutexLock lock(&mu_);
    int count = 0;
    for (const std::string& call : calls_) {
      count += call == url ? 1 : 0;
    }
    return count;
  }

 private:
  absl::Mutex mu_;
  struct Page {
    std::string body;
    std::string content_type;
  };
  std::map<std::string, Page> pages_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
};

class SourcePagesTest : public ::testing::Test {
 protected:
  SourcePagesTest() : verifier_(fetcher_, analyzer_) {
    fetcher_.Serve(kAuthorPage, R"(<div class="h-card"><a class="u-url u-uid p-name"
        href="https://alice.example/about">Alice from her author page</a></div>)");
  }

  VerificationOutcome VerifySource(const std::string& body,
                                   const std::string& content_type = "text/html; charset=utf-8",
                                   const std::string& target = kTarget) {
    fetcher_.Serve(kSource, body, content_type);
    return verifier_.Verify(kSource, target);
  }

  CountingFetcher fetcher_;
  verification::HtmlSourceAnalyzer analyzer_;
  verification::SourceVerifier verifier_;
};

using AuthorshipFetchTest = SourcePagesTest;
using PageEncodingTest = SourcePagesTest;

TEST_F(AuthorshipFetchTest, RelAuthorWithTheMatchingHCardOnThePageFetchesNoAuthorPage) {
  const VerificationOutcome outcome = VerifySource(R"(<link rel="author" href="/about">
      <header class="h-card"><img class="u-photo" src="/me.jpg" alt="">
        <a class="p-name u-url" href="/about">Alice on her post</a></header>
      <article class="h-entry"><p class="e-content">Re <a href="https://bob.example/post">Bob</a>
      </p></article>)");
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.author_name, "Alice on her post");
  EXPECT_EQ(outcome.content.author_url, kAuthorPage);
  EXPECT_EQ(outcome.content.author_photo, "https://alice.example/me.jpg");
  EXPECT_EQ(fetcher_.FetchesOf(kSource), 1);
  EXPECT_EQ(fetcher_.FetchesOf(kAuthorPage), 0);
}

TEST_F(AuthorshipFetchTest, PlainUrlPAuthorWithTheMatchingHCardOnThePageFetchesNoAuthorPage) {
  const VerificationOutcome outcome = VerifySource(R"(
      <div class="h-card"><a class="p-name u-url" href="/about">Alice on her post</a></div>
      <article class="h-entry"><span class="p-author">https://alice.example/about</span>
      <p class="e-content">Re <a href="https://bob.example/post">Bob</a></p></article>)");
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.author_name, "Alice on her post");
  EXPECT_EQ(fetcher_.FetchesOf(kAuthorPage), 0);
}

TEST_F(AuthorshipFetchTest, WithoutAMatchingHCardTheAuthorPageIsFetchedOnce) {
  const VerificationOutcome outcome = VerifySource(R"(<link rel="author" href="/about">
      <div class="h-card"><a class="p-name u-url" href="https://carol.example/">Carol</a></div>
      <article class="h-entry"><p class="e-content">Re <a href="https://bob.example/post">Bob</a>
      </p></article>)");
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.author_name, "Alice from her author page");
  EXPECT_EQ(outcome.content.author_url, kAuthorPage);
  EXPECT_EQ(fetcher_.FetchesOf(kAuthorPage), 1);
}


// The issue's report: ISO-8859-1 declared in the header only; the author was stored with U+FFFD.
TEST_F(PageEncodingTest, ALatin1PageDeclaredInTheHeaderOnlyKeepsItsAuthorsName) {
  const VerificationOutcome outcome = VerifySource(
      "<article class=\"h-entry\"><div class=\"p-author h-card\"><a class=\"p-name u-url\" "
      "href=\"/\">Jos\xE9 M\xFCller</a></div><p class=\"e-content\">Gr\xFC\xDF" "e an "
      "<a href=\"https://bob.example/post\">Bob</a> \x80 \x93zitiert\x94</p></article>",
      "text/html; charset=ISO-8859-1");
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.author_name, "José Müller");
  EXPECT_EQ(outcome.content.content_text, "Grüße an Bob € “zitiert”");
}

TEST_F(PageEncodingTest, ALatin1PageLinksToATargetWithNonAsciiPathCharacters) {
  const std::string target = "https://bob.example/caf\xC3\xA9/se\xC3\xB1or";  // café/señor
  const VerificationOutcome outcome = VerifySource(
      "<meta charset=iso-8859-1><div class=\"h-entry\"><p class=\"e-content\">"
      "<a href=\"https://bob.example/caf\xE9/se\xF1or\">caf\xE9</a></p></div>",
      "text/html", target);
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.content_text, "café");
  // Read as UTF-8 the same bytes would be another URL (/caf%EF%BF%BD/...): no link.
  const VerificationOutcome misread = VerifySource(
      "<div class=\"h-entry\"><p class=\"e-content\">"
      "<a href=\"https://bob.example/caf\xE9/se\xF1or\">caf\xE9</a></p></div>",
      "text/html; charset=utf-8", target);
  EXPECT_EQ(misread.kind, VerificationOutcome::Kind::kFailed);
}

TEST_F(PageEncodingTest, AuthorPagesAreDecodedToo) {
  fetcher_.Serve(kAuthorPage,
                 "<meta charset=\"shift_jis\"><div class=\"h-card\"><a class=\"u-url u-uid "
                 "p-name\" href=\"https://alice.example/about\">\x93\xFA\x96\x7B</a></div>",
                 "text/html");
  const VerificationOutcome outcome = VerifySource(R"(<link rel="author" href="/about">
      <article class="h-entry"><p class="e-content">Re <a href="https://bob.example/post">Bob</a>
      </p></article>)");
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.author_name, "日本");
  EXPECT_EQ(fetcher_.FetchesOf(kAuthorPage), 1);
}

TEST_F(PageEncodingTest, StoredTextIsValidUtf8WhateverTheBytes) {
  const VerificationOutcome outcome = VerifySource(
      "<div class=\"h-entry\"><span class=\"p-author\">Al\xFF\xC3ice</span>"
      "<p class=\"e-content\">a\xED\xA0\x80" "b <a href=\"https://bob.example/post\">x</a> "
      "\xF0\x9F</p></div>",
      "text/html; charset=utf-8");
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified) << outcome.reason;
  EXPECT_EQ(outcome.content.author_name, "Al\xEF\xBF\xBD\xEF\xBF\xBDice");
  EXPECT_NE(outcome.content.content_text.find("\xEF\xBF\xBD"), std::string::npos);
  for (const std::string* text : {&outcome.content.author_name, &outcome.content.content_text,
                                  &outcome.content.content_html}) {
    std::string copy = *text;
    // Every byte of the text is part of a well-formed sequence: re-decoding changes nothing.
    EXPECT_EQ(DecodeAs(copy, "UTF-8"), copy);
  }
}

}  // namespace
}  // namespace portcullis::verifier::html
