#include "ingest-gateway/src/webmention_io_api.h"

#include <optional>
#include <string>

#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
namespace v1 = verifier::v1;

// The request shapes of the clients this API is for, written down as they send them:
//
// webmention.js (github.com/PlaidWeb/webmention.js, static/webmention.js, the current version):
//   `https://webmention.io/api/mentions.jf2?per-page=${maxWebmentions}&sort-by=${sortBy}
//    &sort-dir=${sortDir}` then, per page, `&target[]=${encodeURIComponent('http:' + path)}
//    &target[]=${encodeURIComponent('https:' + path)}`, with the defaults max-webmentions 30,
//   sort-by "published", sort-dir "up".
constexpr char kWebmentionJsQuery[] =
    "per-page=30&sort-by=published&sort-dir=up"
    "&target[]=http%3A%2F%2Fbob.example%2Fpost&target[]=https%3A%2F%2Fbob.example%2Fpost";
// An Eleventy-style numeric pager (the shape of the Eleventy webmention plugins and the
// tutorials they come from, e.g. sia.codes "An In-Depth Tutorial of Webmentions + Eleventy"):
//   `${API}/mentions.jf2?domain=${domain}&token=${TOKEN}&per-page=${perPage}&page=${page}`,
//   page = 0, 1, 2, ... until `children` comes back empty; later runs add `&since=${lastFetched}`.
constexpr char kEleventyPagerQuery[] =
    "domain=bob.example&token=wm-io-token&per-page=100&page=2&since=2024-05-01T10:00:00.000Z";

// webmention.io's documented /api/mentions.jf2 entry (webmention.io's README, "API"): the fields
// and the JSON kind of each. Every one must be in ours, of the same kind.
constexpr char kDocumentedEntry[] = R"({
  "type": "entry",
  "author": {"type": "card", "name": "Tantek Çelik", "photo": "https://example.org/p.jpg",
             "url": "http://tantek.com/"},
  "url": "http://tantek.com/2013/112/t2/milestone-first-federated-indieweb-comment-thread",
  "published": "2013-04-22T15:03:00-07:00",
  "wm-received": "2013-04-25T17:09:33-07:00",
  "wm-id": 900,
  "wm-source": "http://tantek.com/2013/112/t2/milestone-first-federated-indieweb-comment-thread",
  "wm-target": "http://caseorganic.com/post/1",
  "wm-protocol": "webmention",
  "content": {"text": "another milestone", "html": "another <b>milestone</b>"},
  "in-reply-to": "http://caseorganic.com/post/1",
  "wm-property": "in-reply-to",
  "wm-private": false
})";

v1::Mention ApiVerifiedReply() {
  v1::Mention mention;
  mention.set_mention_id("0f8fad5b-d9cb-469f-a165-70867728950e");
  mention.set_wm_id(900);
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

class GatewayWebmentionIoApiTest : public ::testing::Test {
 protected:
  http::HttpResponse Get(void (WebmentionIoApi::*route)(const http::HttpRequest&, http::Respond)
                             const,
                         absl::string_view query, absl::string_view if_none_match = "") {
    http::HttpRequest request;
    request.method = "GET";
    request.query = std::string(query);
    request.request_id = "test-id";
    if (!if_none_match.empty()) {
      request.headers.Add("If-None-Match", if_none_match);
    }
    std::optional<http::HttpResponse> got;
    (api_.*route)(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  testing::FakeVerifierClient verifier_;
  WebmentionIoApi api_{verifier_, 7};
};

TEST_F(GatewayWebmentionIoApiTest, WebmentionJsRequestIsReadAsItMeansIt) {
  absl::StatusOr<v1::ListPublicMentionsRequest> request = ParseApiMentionsQuery(kWebmentionJsQuery);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->page_size(), 30);
  EXPECT_TRUE(request->ascending());
  EXPECT_EQ(request->order(), v1::PUBLIC_MENTION_ORDER_RECEIVED);
  ASSERT_EQ(request->targets_size(), 2);
  EXPECT_EQ(request->targets(0), "http://bob.example/post");
  EXPECT_EQ(request->targets(1), "https://bob.example/post");
  EXPECT_TRUE(request->domain().empty());
}

TEST_F(GatewayWebmentionIoApiTest, EleventyPagerRequestIsReadAsItMeansIt) {
  absl::StatusOr<v1::ListPublicMentionsRequest> request =
      ParseApiMentionsQuery(kEleventyPagerQuery);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->domain(), "bob.example");
  EXPECT_EQ(request->page_size(), 100);
  EXPECT_EQ(request->page(), 2);
  EXPECT_FALSE(request->ascending());  // sort-dir defaults to down, as on webmention.io.
  EXPECT_EQ(request->since().seconds(), 1714557600);
  // Asking for everything at once gets pages of 100, not a refusal.
  request = ParseApiMentionsQuery("domain=bob.example&per-page=10000");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->page_size(), 100);
}

TEST_F(GatewayWebmentionIoApiTest, ParametersHaveLimitsAndClearErrors) {
  for (const char* bad : {
           "",                                             // Neither target nor domain.
           "domain=a.example&target=https://a.example/",   // Both.
           "domain=a.example&domain=b.example",            // Twice.
           "domain=a.example&page=-1", "domain=a.example&page=2501",
           "domain=a.example&per-page=100&page=501",
           "domain=a.example&per-page=0", "domain=a.example&sort-by=rsvp",
           "domain=a.example&sort-dir=sideways", "domain=a.example&wm-property=follow-of",
           "domain=a.example&since=yesterday", "domain=a.example&since_id=-3",
           "domain=a%20b.example", "domain=%ZZ",
       }) {
    EXPECT_FALSE(ParseApiMentionsQuery(bad).ok()) << bad;
  }
  std::string many = "x=1";
  for (int i = 0; i <= kMaxApiTargets; ++i) {
    many += "&target[]=https://a.example/" + std::to_string(i);
  }
  EXPECT_FALSE(ParseApiMentionsQuery(many).ok());
  EXPECT_FALSE(ParseApiCountQuery(many).ok());
  EXPECT_FALSE(ParseApiMentionsQuery("target=https://a.example/" + std::string(2100, 'x')).ok());

  const http::HttpResponse response = Get(&WebmentionIoApi::Mentions, "page=1");
  EXPECT_EQ(response.status, 400);
  EXPECT_THAT(response.body, HasSubstr("invalid_request"));
  EXPECT_EQ(response.headers.Get("Access-Control-Allow-Origin").value_or(""), "*");
  EXPECT_TRUE(verifier_.public_list_requests.empty());
}

TEST_F(GatewayWebmentionIoApiTest, EntriesHaveEveryFieldOfWebmentionIoWithItsKind) {
  v1::ListPublicMentionsResponse page;
  *page.add_mentions() = ApiVerifiedReply();
  verifier_.public_list_result = page;
  const http::HttpResponse response = Get(&WebmentionIoApi::Mentions, kWebmentionJsQuery);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.Get("Access-Control-Allow-Origin").value_or(""), "*");
  EXPECT_FALSE(response.headers.Get("ETag").value_or("").empty());
  ASSERT_EQ(verifier_.public_list_requests.size(), 1u);

  const boost::json::object feed = boost::json::parse(response.body).as_object();
  EXPECT_EQ(feed.at("type").as_string(), "feed");
  EXPECT_EQ(feed.at("name").as_string(), "Webmentions");
  ASSERT_EQ(feed.at("children").as_array().size(), 1u);
  const boost::json::object& entry = feed.at("children").as_array()[0].as_object();
  const boost::json::object documented = boost::json::parse(kDocumentedEntry).as_object();
  for (const auto& field : documented) {
    ASSERT_TRUE(entry.contains(field.key())) << field.key();
    EXPECT_EQ(entry.at(field.key()).kind(), field.value().kind()) << field.key();
  }
  for (const auto& field : documented.at("author").as_object()) {
    EXPECT_EQ(entry.at("author").as_object().at(field.key()).kind(), field.value().kind())
        << "author." << field.key();
  }
  // And the values, field by field.
  EXPECT_EQ(entry.at("wm-id").as_int64(), 900);
  EXPECT_EQ(entry.at("wm-property").as_string(), "in-reply-to");
  EXPECT_EQ(entry.at("in-reply-to").as_string(), "https://bob.example/post");
  EXPECT_EQ(entry.at("wm-target").as_string(), "https://bob.example/post");
  EXPECT_EQ(entry.at("wm-source").as_string(), "https://alice.example/reply");
  EXPECT_EQ(entry.at("url").as_string(), "https://alice.example/reply");
  EXPECT_EQ(entry.at("published").as_string(), "2024-05-01T10:00:00Z");
  EXPECT_EQ(entry.at("wm-received").as_string(), "2024-05-01T10:00:00Z");
  EXPECT_EQ(entry.at("author").as_object().at("name").as_string(), "Alice");
  EXPECT_EQ(entry.at("content").as_object().at("html").as_string(), "<p>Nice <b>post</b></p>");
  EXPECT_EQ(entry.at("content").as_object().at("text").as_string(), "Nice post");
  EXPECT_FALSE(entry.at("wm-private").as_bool());

  // 304 on the ETag; the cached body is not sent again.
  const http::HttpResponse again = Get(&WebmentionIoApi::Mentions, kWebmentionJsQuery,
                                       *response.headers.Get("ETag"));
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
}

TEST_F(GatewayWebmentionIoApiTest, ALikeCarriesLikeOfAndNothingButVerifiedIsServed) {
  v1::ListPublicMentionsResponse page;
  v1::Mention like = ApiVerifiedReply();
  like.set_type(v1::MENTION_TYPE_LIKE);
  like.clear_author();
  *page.add_mentions() = like;
  v1::Mention pending = ApiVerifiedReply();
  pending.set_state(v1::MENTION_STATE_PENDING);
  *page.add_mentions() = pending;
  verifier_.public_list_result = page;
  const http::HttpResponse response =
      Get(&WebmentionIoApi::Mentions, "target=https://bob.example/post");
  ASSERT_EQ(response.status, 200);
  const boost::json::array children =
      boost::json::parse(response.body).as_object().at("children").as_array();
  ASSERT_EQ(children.size(), 1u);
  const boost::json::object& entry = children[0].as_object();
  EXPECT_EQ(entry.at("like-of").as_string(), "https://bob.example/post");
  EXPECT_FALSE(entry.contains("in-reply-to"));
  // A card without anything known still has webmention.io's three fields, empty.
  EXPECT_EQ(entry.at("author").as_object().at("photo").as_string(), "");
}

TEST_F(GatewayWebmentionIoApiTest, CountIsWebmentionIosShape) {
  v1::CountPublicMentionsResponse counts;
  counts.set_count(6);
  counts.set_likes(3);
  counts.set_replies(2);
  counts.set_mentions(1);
  verifier_.public_count_result = counts;
  const http::HttpResponse response =
      Get(&WebmentionIoApi::Count, "target=https%3A%2F%2Fbob.example%2Fpost");
  ASSERT_EQ(response.status, 200) << response.body;
  ASSERT_EQ(verifier_.public_count_requests.size(), 1u);
  EXPECT_EQ(verifier_.public_count_requests[0].targets(0), "https://bob.example/post");
  EXPECT_EQ(response.body,
            R"({"count":6,"type":{"like":3,"mention":1,"reply":2,"repost":0,"bookmark":0,"rsvp":0}})");
  EXPECT_EQ(response.headers.Get("Cache-Control").value_or(""), "public, max-age=30");
  EXPECT_FALSE(response.headers.Get("ETag").value_or("").empty());
  EXPECT_EQ(Get(&WebmentionIoApi::Count, "domain=bob.example").status, 400);
}

TEST_F(GatewayWebmentionIoApiTest, ChangesListRemovalsAsDeletedAndTheNextCursor) {
  v1::ListMentionChangesResponse page;
  v1::MentionChange* live = page.add_changes();
  live->set_wm_id(900);
  *live->mutable_mention() = ApiVerifiedReply();
  v1::MentionChange* gone = page.add_changes();
  gone->set_wm_id(901);
  gone->set_deleted(true);
  page.set_next_cursor("812.44");
  verifier_.changes_result = page;
  const http::HttpResponse response =
      Get(&WebmentionIoApi::Changes, "domain=bob.example&after=800.2");
  ASSERT_EQ(response.status, 200) << response.body;
  ASSERT_EQ(verifier_.changes_requests.size(), 1u);
  EXPECT_EQ(verifier_.changes_requests[0].after(), "800.2");
  EXPECT_EQ(verifier_.changes_requests[0].limit(), kDefaultApiChanges);
  const boost::json::object body = boost::json::parse(response.body).as_object();
  EXPECT_EQ(body.at("next").as_string(), "812.44");
  const boost::json::array& children = body.at("children").as_array();
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].as_object().at("wm-id").as_int64(), 900);
  EXPECT_EQ(children[0].as_object().at("wm-property").as_string(), "in-reply-to");
  EXPECT_EQ(children[1].as_object().at("wm-id").as_int64(), 901);
  EXPECT_TRUE(children[1].as_object().at("deleted").as_bool());
  EXPECT_EQ(response.headers.Get("Cache-Control").value_or(""), "public, max-age=0");

  EXPECT_EQ(Get(&WebmentionIoApi::Changes, "after=1.2").status, 400);
  EXPECT_EQ(Get(&WebmentionIoApi::Changes, "domain=bob.example&limit=1001").status, 400);
}

TEST_F(GatewayWebmentionIoApiTest, VerifierOutageIs503WithRetryAfter) {
  verifier_.public_list_result = absl::UnavailableError("down");
  const http::HttpResponse response = Get(&WebmentionIoApi::Mentions, "domain=bob.example");
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After").value_or(""), "7");
  EXPECT_THAT(response.body, ::testing::Not(HasSubstr("down")));
}

TEST(GatewaySinceTimeTest, ReadsTheTimesClientsSend) {
  EXPECT_EQ(ParseSinceTime("2024-05-01T10:00:00Z"), absl::FromUnixSeconds(1714557600));
  EXPECT_EQ(ParseSinceTime("2024-05-01T10:00:00.000Z"), absl::FromUnixSeconds(1714557600));
  EXPECT_EQ(ParseSinceTime("2024-05-01T12:00:00+02:00"), absl::FromUnixSeconds(1714557600));
  EXPECT_EQ(ParseSinceTime("2024-05-01T03:00:00-0700"), absl::FromUnixSeconds(1714557600));
  EXPECT_EQ(ParseSinceTime("2024-05-01"), absl::FromUnixSeconds(1714521600));
  EXPECT_FALSE(ParseSinceTime("May 1st").has_value());
}

}  // namespace
}  // namespace portcullis::gateway
