#include "ingest-gateway/src/mentions_feed.h"

#include <optional>
#include <string>

#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace v1 = verifier::v1;

v1::Mention VerifiedReply() {
  v1::Mention mention;
  mention.set_mention_id("0f8fad5b-d9cb-469f-a165-70867728950e");
  mention.set_source("https://alice.example/reply");
  mention.set_target("https://bob.example/post");
  mention.set_state(v1::MENTION_STATE_VERIFIED);
  mention.set_type(v1::MENTION_TYPE_REPLY);
  mention.mutable_author()->set_name("Alice");
  mention.mutable_author()->set_url("https://alice.example/");
  mention.mutable_author()->set_photo("https://alice.example/a.jpg");
  mention.set_published("2024-05-01T10:00:00Z");
  mention.set_url("https://alice.example/reply");
  mention.set_content_text("Nice post");
  mention.set_content_html("<p>Nice <b>post</b></p>");
  mention.mutable_created_at()->set_seconds(1714557600);
  return mention;
}

class GatewayMentionsFeedTest : public ::testing::Test {
 protected:
  http::HttpResponse Get(absl::string_view query, absl::string_view if_none_match = "") {
    http::HttpRequest request;
    request.method = "GET";
    request.path = "/mentions";
    request.query = std::string(query);
    request.request_id = "test-id";
    if (!if_none_match.empty()) {
      request.headers.Add("If-None-Match", if_none_match);
    }
    std::optional<http::HttpResponse> got;
    feed_.Handle(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  testing::FakeVerifierClient verifier_;
  MentionsFeed feed_{verifier_, 7};
};

TEST_F(GatewayMentionsFeedTest, ServesAJf2FeedOfVerifiedMentions) {
  v1::ListMentionsResponse page;
  *page.add_mentions() = VerifiedReply();
  verifier_.list_result = page;
  const http::HttpResponse response = Get("target=https%3A%2F%2Fbob.example%2Fpost");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.Get("Content-Type"), "application/jf2feed+json");
  EXPECT_EQ(response.headers.Get("Access-Control-Allow-Origin"), "*");
  EXPECT_THAT(std::string(*response.headers.Get("Cache-Control")), HasSubstr("max-age=60"));
  EXPECT_FALSE(response.headers.Contains("Link")) << "one page only";

  ASSERT_EQ(verifier_.lists.size(), 1u);
  EXPECT_EQ(verifier_.lists[0].target(), "https://bob.example/post");
  EXPECT_EQ(verifier_.lists[0].domain(), "");
  EXPECT_EQ(verifier_.lists[0].state(), v1::MENTION_STATE_VERIFIED) << "VERIFIED only";
  EXPECT_EQ(verifier_.lists[0].page_size(), kDefaultFeedPageSize);

  const boost::json::value feed = boost::json::parse(response.body);
  EXPECT_EQ(feed.at("type"), "feed");
  const boost::json::array& children = feed.at("children").as_array();
  ASSERT_EQ(children.size(), 1u);
  const boost::json::object& entry = children[0].as_object();
  EXPECT_EQ(entry.at("type"), "entry");
  EXPECT_EQ(entry.at("author").at("type"), "card");
  EXPECT_EQ(entry.at("author").at("name"), "Alice");
  EXPECT_EQ(entry.at("author").at("url"), "https://alice.example/");
  EXPECT_EQ(entry.at("author").at("photo"), "https://alice.example/a.jpg");
  EXPECT_EQ(entry.at("url"), "https://alice.example/reply");
  EXPECT_EQ(entry.at("published"), "2024-05-01T10:00:00Z");
  EXPECT_EQ(entry.at("content").at("text"), "Nice post");
  EXPECT_EQ(entry.at("content").at("html"), "<p>Nice <b>post</b></p>");
  EXPECT_EQ(entry.at("wm-property"), "in-reply-to");
  EXPECT_EQ(entry.at("wm-target"), "https://bob.example/post");
  EXPECT_EQ(entry.at("wm-source"), "https://alice.example/reply");
  EXPECT_EQ(entry.at("wm-received"), "2024-05-01T10:00:00Z");
  EXPECT_EQ(entry.at("wm-id"), "0f8fad5b-d9cb-469f-a165-70867728950e");
  EXPECT_FALSE(entry.contains("name")) << "empty fields are left out";
  EXPECT_FALSE(entry.contains("rsvp"));
  EXPECT_FALSE(feed.as_object().contains("next"));
}

// Moderation (issue 16): the verifier applies the site's policy, reviews and blocks for the feed
// whatever scopes the gateway's token has.
TEST(GatewayMentionsFeedRequestTest, TheFeedAsksForWhatThePublicSeesOnly) {
  FeedQuery query;
  query.site = "bob.example";
  const verifier::v1::ListMentionsRequest request = ToListRequest(query);
  EXPECT_TRUE(request.shown_only());
  EXPECT_EQ(request.state(), verifier::v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(request.review(), verifier::v1::REVIEW_STATE_UNSPECIFIED);
}

TEST_F(GatewayMentionsFeedTest, EveryTypeHasItsWmProperty) {
  const std::pair<v1::MentionType, const char*> cases[] = {
      {v1::MENTION_TYPE_MENTION, "mention-of"}, {v1::MENTION_TYPE_REPLY, "in-reply-to"},
      {v1::MENTION_TYPE_LIKE, "like-of"},       {v1::MENTION_TYPE_REPOST, "repost-of"},
      {v1::MENTION_TYPE_BOOKMARK, "bookmark-of"}, {v1::MENTION_TYPE_RSVP, "rsvp"},
  };
  for (const auto& [type, property] : cases) {
    EXPECT_EQ(WmProperty(type), property);
  }
  v1::Mention rsvp = VerifiedReply();
  rsvp.set_type(v1::MENTION_TYPE_RSVP);
  rsvp.set_rsvp("maybe");
  rsvp.clear_author();
  rsvp.clear_url();
  const boost::json::object entry = Jf2Entry(rsvp);
  EXPECT_EQ(entry.at("rsvp"), "maybe");
  EXPECT_FALSE(entry.contains("author"));
  EXPECT_EQ(entry.at("url"), "https://alice.example/reply") << "the source when no u-url";
}

TEST_F(GatewayMentionsFeedTest, OnlyWebUrlsAreServedAsLinks) {
  v1::Mention mention = VerifiedReply();
  mention.mutable_author()->set_url("javascript:alert(1)");
  mention.mutable_author()->set_photo("data:image/svg+xml,<svg onload=alert(1)>");
  mention.set_url("JavaScript:alert(2)");
  const boost::json::object entry = Jf2Entry(mention);
  EXPECT_EQ(entry.at("author").at("name"), "Alice");
  EXPECT_FALSE(entry.at("author").as_object().contains("url"));
  EXPECT_FALSE(entry.at("author").as_object().contains("photo"));
  EXPECT_FALSE(entry.contains("url"));
  EXPECT_EQ(Jf2Entry(VerifiedReply()).at("author").at("url"), "https://alice.example/");
}

// Issue 17: a proxying site's author photo is the gateway's /avatar/<hash>, under the public
// base URL when one is configured; other sites keep the remote URL.
TEST_F(GatewayMentionsFeedTest, AProxyingSitesPhotoIsTheAvatarProxy) {
  const std::string hash(64, 'c');
  v1::Mention mention = VerifiedReply();
  mention.mutable_author()->set_photo_proxy_hash(hash);
  const std::string absolute = "https://mentions.example/avatar/" + hash;
  const std::string relative = "/avatar/" + hash;
  EXPECT_EQ(Jf2Entry(mention, "https://mentions.example").at("author").at("photo"),
            absolute.c_str());
  EXPECT_EQ(Jf2Entry(mention).at("author").at("photo"), relative.c_str());
  EXPECT_EQ(Jf2Entry(VerifiedReply(), "https://mentions.example").at("author").at("photo"),
            "https://alice.example/a.jpg");
  mention.mutable_author()->set_photo_proxy_hash("../../etc");
  EXPECT_EQ(Jf2Entry(mention, "https://mentions.example").at("author").at("photo"),
            "https://alice.example/a.jpg")
      << "only a well-formed hash is put in a URL";

  MentionsFeed feed(verifier_, 7, {}, "https://mentions.example");
  v1::ListMentionsResponse page;
  *page.add_mentions() = VerifiedReply();
  page.mutable_mentions(0)->mutable_author()->set_photo_proxy_hash(hash);
  verifier_.list_result = page;
  http::HttpRequest request;
  request.method = "GET";
  request.path = "/mentions";
  request.query = "site=bob.example";
  std::optional<http::HttpResponse> got;
  feed.Handle(request, [&](http::HttpResponse response) { got = std::move(response); });
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 200);
  EXPECT_THAT(got->body, HasSubstr("\"photo\":\"https://mentions.example/avatar/" + hash));
  EXPECT_THAT(got->body, Not(HasSubstr("alice.example/a.jpg")));
}

TEST_F(GatewayMentionsFeedTest, NeverServesAMentionThatIsNotVerified) {
  v1::ListMentionsResponse page;
  *page.add_mentions() = VerifiedReply();
  v1::Mention withdrawn = VerifiedReply();
  withdrawn.set_state(v1::MENTION_STATE_FAILED);
  withdrawn.set_content_html("<p>withdrawn</p>");
  *page.add_mentions() = withdrawn;
  const std::string body = RenderJf2Feed(page, "");
  EXPECT_THAT(body, Not(HasSubstr("withdrawn")));
  EXPECT_EQ(boost::json::parse(body).at("children").as_array().size(), 1u);
}

TEST_F(GatewayMentionsFeedTest, PagesWithLinkHeaderAndNextField) {
  v1::ListMentionsResponse page;
  *page.add_mentions() = VerifiedReply();
  page.set_next_page_token("bTE6MTIz-_");
  verifier_.list_result = page;
  const http::HttpResponse response = Get("site=bob.example&per-page=1");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(verifier_.lists[0].domain(), "bob.example");
  EXPECT_EQ(verifier_.lists[0].page_size(), 1);
  const std::string next = "/mentions?site=bob.example&per-page=1&page=bTE6MTIz-_";
  EXPECT_EQ(response.headers.Get("Link"), "<" + next + ">; rel=\"next\"");
  EXPECT_EQ(std::string(boost::json::parse(response.body).at("next").as_string()), next);

  // Following the link asks the verifier for that page.
  Get("site=bob.example&per-page=1&page=bTE6MTIz-_");
  ASSERT_EQ(verifier_.lists.size(), 2u);
  EXPECT_EQ(verifier_.lists[1].page_token(), "bTE6MTIz-_");
  // A target with reserved characters survives the round trip.
  EXPECT_EQ(NextPageUrl({.target = "https://b.example/p?x=1&y=2"}, "t"),
            "/mentions?target=https%3A%2F%2Fb.example%2Fp%3Fx%3D1%26y%3D2&per-page=20&page=t");
}

TEST_F(GatewayMentionsFeedTest, EtagAndIfNoneMatch) {
  v1::ListMentionsResponse page;
  *page.add_mentions() = VerifiedReply();
  verifier_.list_result = page;
  const http::HttpResponse first = Get("target=https://bob.example/post");
  ASSERT_EQ(first.status, 200);
  const std::string etag(*first.headers.Get("ETag"));
  EXPECT_EQ(etag, StrongEtag(first.body));
  EXPECT_EQ(etag.front(), '"');
  EXPECT_EQ(etag.size(), 66u) << "a quoted SHA-256";

  const http::HttpResponse not_modified = Get("target=https://bob.example/post", etag);
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_EQ(not_modified.body, "");
  EXPECT_EQ(not_modified.headers.Get("ETag"), etag);
  EXPECT_EQ(not_modified.headers.Get("Access-Control-Allow-Origin"), "*");

  EXPECT_EQ(Get("target=https://bob.example/post", "\"other\", W/" + etag).status, 304);
  EXPECT_EQ(Get("target=https://bob.example/post", "*").status, 304);
  EXPECT_EQ(Get("target=https://bob.example/post", "\"other\"").status, 200);

  // New content, new tag.
  page.mutable_mentions(0)->set_content_text("edited");
  verifier_.list_result = page;
  const http::HttpResponse changed = Get("target=https://bob.example/post", etag);
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.headers.Get("ETag"), etag);
}

TEST_F(GatewayMentionsFeedTest, BadParametersAre400WithoutACall) {
  for (const char* query :
       {"", "per-page=5", "target=https://b.example/&site=b.example", "target=",
        "target=https://b.example/&target=https://c.example/", "site=b.example&per-page=0",
        "site=b.example&per-page=101", "site=b.example&per-page=ten", "site=b%ZZ",
        "target=https://b.example/a%20b"}) {
    const http::HttpResponse response = Get(query);
    EXPECT_EQ(response.status, 400) << query;
    EXPECT_EQ(boost::json::parse(response.body).at("error"), "invalid_request") << query;
    EXPECT_EQ(response.headers.Get("Access-Control-Allow-Origin"), "*") << query;
  }
  const std::string long_target = "target=https://b.example/" + std::string(2100, 'a');
  EXPECT_EQ(Get(long_target).status, 400);
  EXPECT_TRUE(verifier_.lists.empty());
}

TEST_F(GatewayMentionsFeedTest, VerifierErrorsGoThroughTheStatusTable) {
  verifier_.list_result = absl::UnavailableError("db down at 10.0.0.5");
  const http::HttpResponse unavailable = Get("site=bob.example");
  EXPECT_EQ(unavailable.status, 503);
  EXPECT_EQ(unavailable.headers.Get("Retry-After"), "7");
  EXPECT_THAT(unavailable.body, Not(HasSubstr("10.0.0.5")));
  verifier_.list_result = absl::InvalidArgumentError("target must be an absolute http URL");
  EXPECT_EQ(Get("target=mailto:x").status, 400);
}

TEST_F(GatewayMentionsFeedTest, PreflightAllowsAnyOrigin) {
  const http::HttpResponse response = MentionsPreflightResponse();
  EXPECT_EQ(response.status, 204);
  EXPECT_EQ(response.headers.Get("Access-Control-Allow-Origin"), "*");
  EXPECT_THAT(std::string(*response.headers.Get("Access-Control-Allow-Methods")),
              HasSubstr("GET"));
  EXPECT_THAT(std::string(*response.headers.Get("Access-Control-Allow-Headers")),
              HasSubstr("If-None-Match"));
}

}  // namespace
}  // namespace portcullis::gateway
