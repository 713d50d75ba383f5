// GET /mentions end to end: mentions submitted through the real gateway, verified by recording
// the outcome through the real job store (the queue's claim/finish path; the verifier runs
// without workers), read back over real HTTP as a jf2 feed.
#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_job_store.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

class MentionsFeedStackTest : public StackTest {
 protected:
  // Submits source -> target through the gateway; returns the mention id.
  std::string Submit(const std::string& source, const std::string& target) {
    const testing::HttpResult accepted = stack_->PostWebmention(source, target);
    EXPECT_EQ(accepted.status, 202) << accepted.body << accepted.error;
    return accepted.status == 202
               ? std::string(json::parse(accepted.body).at("mention_id").as_string())
               : "";
  }

  // Claims every queued job and records `result` for it, as a verification worker would.
  void FinishAll(const verifier::store::JobResult& result) {
    auto pool = verifier::store::PgConnectionPool::Create(
        {database_->connection_string(), 1, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    verifier::store::PgJobStore jobs(**pool);
    auto claimed = jobs.Claim("feed-test", 100, absl::Seconds(30));
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    for (const verifier::store::JobRecord& job : *claimed) {
      ASSERT_TRUE(jobs.Finish(job.job_id, "feed-test", result).ok());
    }
  }

  static verifier::store::JobResult Reply() {
    verifier::store::JobResult result;
    result.kind = verifier::store::JobResult::Kind::kVerified;
    result.content.type = "reply";
    result.content.author_name = "Alice";
    result.content.author_url = "https://alice.example/";
    result.content.author_photo = "https://alice.example/alice.jpg";
    result.content.published = "2024-05-01T10:00:00Z";
    result.content.content_text = "Great post";
    result.content.content_html = "<p>Great <em>post</em></p>";
    return result;
  }

  testing::HttpResult Get(const std::string& path,
                          const std::map<std::string, std::string>& headers = {}) {
    return testing::SendHttp(stack_->http_port(), "GET", path, "", "", absl::Seconds(10),
                             headers);
  }
};

TEST_F(MentionsFeedStackTest, ServesVerifiedMentionsWithEtagAndCors) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  const std::string reply = Submit("https://alice.example/reply", "https://bob.example/post");
  FinishAll(Reply());
  // A second mention stays PENDING: never in the feed.
  Submit("https://carol.example/pending", "https://bob.example/post");

  const std::string path = absl::StrCat(
      "/mentions?target=", testing::FormEncode("https://bob.example/post#comments"));
  const testing::HttpResult feed = Get(path);
  ASSERT_EQ(feed.status, 200) << feed.body << feed.error;
  EXPECT_EQ(feed.Header("content-type"), "application/jf2feed+json");
  EXPECT_EQ(feed.Header("access-control-allow-origin"), "*");
  EXPECT_NE(feed.Header("cache-control").find("max-age="), std::string::npos);
  const json::value body = json::parse(feed.body);
  EXPECT_EQ(body.at("type"), "feed");
  const json::array& children = body.at("children").as_array();
  ASSERT_EQ(children.size(), 1u) << feed.body;
  const json::value& entry = children[0];
  EXPECT_EQ(entry.at("type"), "entry");
  EXPECT_EQ(entry.at("wm-property"), "in-reply-to");
  EXPECT_EQ(entry.at("wm-id").as_string(), reply);
  EXPECT_EQ(entry.at("wm-source"), "https://alice.example/reply");
  EXPECT_EQ(entry.at("wm-target"), "https://bob.example/post");
  EXPECT_EQ(entry.at("author").at("name"), "Alice");
  EXPECT_EQ(entry.at("author").at("photo"), "https://alice.example/alice.jpg");
  EXPECT_EQ(entry.at("content").at("html"), "<p>Great <em>post</em></p>");
  EXPECT_EQ(entry.at("published"), "2024-05-01T10:00:00Z");

  // The same feed by site.
  const testing::HttpResult by_site = Get("/mentions?site=bob.example");
  ASSERT_EQ(by_site.status, 200) << by_site.body;
  EXPECT_EQ(json::parse(by_site.body).at("children").as_array().size(), 1u);

  // Conditional GET: unchanged → 304 without a body, with the tag and CORS.
  const std::string etag = feed.Header("etag");
  ASSERT_FALSE(etag.empty());
  const testing::HttpResult not_modified = Get(path, {{"If-None-Match", etag}});
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_EQ(not_modified.body, "");
  EXPECT_EQ(not_modified.Header("etag"), etag);
  EXPECT_EQ(not_modified.Header("access-control-allow-origin"), "*");

  // The pending mention verified as a like: a new body, a new tag.
  verifier::store::JobResult like = Reply();
  like.content.type = "like";
  FinishAll(like);
  const testing::HttpResult changed = Get(path, {{"If-None-Match", etag}});
  ASSERT_EQ(changed.status, 200);
  EXPECT_NE(changed.Header("etag"), etag);
  EXPECT_EQ(json::parse(changed.body).at("children").as_array().size(), 2u);

  // CORS preflight from a static site.
  const testing::HttpResult preflight = testing::SendHttp(
      stack_->http_port(), "OPTIONS", "/mentions", "", "", absl::Seconds(10),
      {{"Origin", "https://bob.example"}, {"Access-Control-Request-Method", "GET"}});
  EXPECT_EQ(preflight.status, 204);
  EXPECT_EQ(preflight.Header("access-control-allow-origin"), "*");
  EXPECT_NE(preflight.Header("access-control-allow-methods").find("GET"), std::string::npos);
}

TEST_F(MentionsFeedStackTest, PagesFollowTheNextLink) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  for (int i = 0; i < 5; ++i) {
    Submit(absl::StrCat("https://alice.example/", i), "https://bob.example/post");
  }
  FinishAll(Reply());
  std::string path = "/mentions?site=bob.example&per-page=2";
  std::set<std::string> seen;
  int pages = 0;
  while (!path.empty() && pages < 10) {
    const testing::HttpResult page = Get(path);
    ASSERT_EQ(page.status, 200) << page.body;
    ++pages;
    const json::object body = json::parse(page.body).as_object();
    for (const json::value& entry : body.at("children").as_array()) {
      seen.insert(std::string(entry.at("wm-id").as_string()));
    }
    path = body.contains("next") ? std::string(body.at("next").as_string()) : "";
    if (!path.empty()) {
      EXPECT_EQ(page.Header("link"), absl::StrCat("<", path, ">; rel=\"next\""));
    }
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen.size(), 5u);
}

TEST_F(MentionsFeedStackTest, WithdrawnMentionLeavesTheFeedAndStatusShowsTheDiagnostic) {
  ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  const std::string id = Submit("https://alice.example/reply", "https://bob.example/post-1");
  FinishAll(Reply());
  ASSERT_EQ(json::parse(Get("/mentions?site=bob.example").body).at("children").as_array().size(),
            1u);
  // Submitted again; the source no longer links (only to /post-10): unmention.
  Submit("https://alice.example/reply", "https://bob.example/post-1");
  verifier::store::JobResult no_link;
  no_link.kind = verifier::store::JobResult::Kind::kFailed;
  no_link.reason = "no_link";
  no_link.links_to_target_host = {"https://bob.example/post-10"};
  FinishAll(no_link);
  const testing::HttpResult feed = Get("/mentions?site=bob.example");
  ASSERT_EQ(feed.status, 200);
  EXPECT_TRUE(json::parse(feed.body).at("children").as_array().empty()) << feed.body;
  EXPECT_EQ(feed.body.find("Great"), std::string::npos);

  const testing::HttpResult status = Get(absl::StrCat("/webmention/status/", id),
                                         {{"Accept", "text/html"}});
  ASSERT_EQ(status.status, 200);
  EXPECT_NE(status.body.find("no_link"), std::string::npos);
  // The near miss is offered as a link the sender can follow (issue 22's status page).
  EXPECT_NE(status.body.find("<li><a href=\"https://bob.example/post-10\""), std::string::npos)
      << status.body;
}

TEST_F(MentionsFeedStackTest, BadParametersAre400AndAnOutageIs503) {
  EXPECT_EQ(Get("/mentions").status, 400);
  EXPECT_EQ(Get("/mentions?site=bob.example&target=https%3A%2F%2Fbob.example%2F").status, 400);
  EXPECT_EQ(Get("/mentions?target=ftp%3A%2F%2Fbob.example%2F").status, 400);
  EXPECT_EQ(Get("/mentions?site=bob.example&page=garbage").status, 400);
  stack_->StopVerifier();
  const testing::HttpResult down = Get("/mentions?site=bob.example");
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_FALSE(down.Header("retry-after").empty());
}

}  // namespace
}  // namespace portcullis::integration
