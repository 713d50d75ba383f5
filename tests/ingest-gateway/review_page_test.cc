// The review page's handlers and documents (issue 16) against a recording ReviewClient: which
// token reaches the verifier, the cookie, CSRF, the redirects, and what is escaped. The page in a
// real browser against the real binaries: tests/integration/review_page_browser_test.cc.
#include "ingest-gateway/src/review_page.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;

constexpr char kReviewTestKey[] = "0123456789abcdef0123456789abcdef";
constexpr char kReviewTestToken[] =
    "pct_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

// Answers every call at once with what the test set, and records what it was asked.
class RecordingReviewClient final : public ReviewClient {
 public:
  void ListReviewQueue(absl::string_view, const std::string& token,
                       const v1::ListReviewQueueRequest& request,
                       QueueCallback callback) override {
    tokens.push_back(token);
    last_queue = request;
    callback(queue_answer);
  }
  void ReviewMention(absl::string_view, const std::string& token,
                     const v1::ReviewMentionRequest& request, ReviewCallback callback) override {
    tokens.push_back(token);
    reviews.push_back(request);
    callback(review_answer);
  }

  std::vector<std::string> tokens;
  v1::ListReviewQueueRequest last_queue;
  std::vector<v1::ReviewMentionRequest> reviews;
  absl::StatusOr<v1::ListReviewQueueResponse> queue_answer = v1::ListReviewQueueResponse();
  absl::StatusOr<v1::ReviewMentionResponse> review_answer = v1::ReviewMentionResponse();
};

class GatewayReviewPageTest : public ::testing::Test {
 protected:
  http::HttpResponse Call(void (ReviewPage::*handler)(const http::HttpRequest&, http::Respond)
                              const,
                          http::HttpRequest request) {
    std::optional<http::HttpResponse> answer;
    (page_.*handler)(request, [&](http::HttpResponse response) { answer = std::move(response); });
    EXPECT_TRUE(answer.has_value());
    return answer.value_or(http::HttpResponse());
  }

  static http::HttpRequest Request(const std::string& query, const std::string& body = "",
                                   bool with_cookie = true) {
    http::HttpRequest request;
    request.query = query;
    request.body = body;
    request.request_id = "r1";
    if (with_cookie) {
      request.headers.Add("Cookie", absl::StrCat("other=1; portcullis_review=", kReviewTestToken));
    }
    return request;
  }

  static std::string Csrf() { return ReviewCsrfToken(kReviewTestKey, kReviewTestToken); }

  RecordingReviewClient client_;
  ReviewPage page_{client_, kReviewTestKey};
};

v1::Mention Pending(const std::string& id, const std::string& author) {
  v1::Mention mention;
  mention.set_mention_id(id);
  mention.set_source("https://alice.example/reply");
  mention.set_target("https://bob.example/post");
  mention.set_type(v1::MENTION_TYPE_REPLY);
  mention.mutable_author()->set_name(author);
  mention.mutable_author()->set_url("https://alice.example/");
  mention.mutable_author()->set_photo("https://alice.example/photo.jpg");
  mention.set_content_html("<p>Hi <em>there</em></p>");
  mention.set_review(v1::REVIEW_STATE_UNREVIEWED);
  mention.mutable_created_at()->set_seconds(1700000000);
  return mention;
}

TEST_F(GatewayReviewPageTest, WithoutASessionTheFormAsksForATokenAndCallsNothing) {
  const http::HttpResponse response =
      Call(&ReviewPage::Show, Request("site=bob.example", "", false));
  EXPECT_EQ(response.status, 200);
  EXPECT_NE(response.body.find("id=\"token\""), std::string::npos);
  EXPECT_NE(response.body.find("<label for=\"token\">"), std::string::npos);
  EXPECT_TRUE(client_.tokens.empty());
  EXPECT_EQ(response.headers.Get("Content-Security-Policy"), kReviewContentSecurityPolicy);
  EXPECT_EQ(response.headers.Get("Cache-Control"), "no-store");
  EXPECT_EQ(response.body.find("<script"), std::string::npos);
}

TEST_F(GatewayReviewPageTest, LoggingInChecksTheTokenThenKeepsItInAStrictHttpOnlyCookie) {
  http::HttpResponse response = Call(
      &ReviewPage::LogIn, Request("", absl::StrCat("site=bob.example&token=", kReviewTestToken),
                                  false));
  EXPECT_EQ(response.status, 303);
  EXPECT_EQ(response.headers.Get("Location"), "/admin/review?site=bob.example&state=unreviewed");
  const std::string cookie(response.headers.Get("Set-Cookie").value_or(""));
  EXPECT_NE(cookie.find(absl::StrCat("portcullis_review=", kReviewTestToken)), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_NE(cookie.find("Path=/admin/review"), std::string::npos);
  ASSERT_EQ(client_.tokens.size(), 1u);
  EXPECT_EQ(client_.tokens[0], kReviewTestToken) << "the reviewer's token, not the gateway's";
  EXPECT_EQ(client_.last_queue.site(), "bob.example");

  // A token the verifier refuses: the form again, no cookie kept.
  client_.queue_answer = absl::UnauthenticatedError("unknown token");
  response = Call(&ReviewPage::LogIn,
                  Request("", absl::StrCat("site=bob.example&token=", kReviewTestToken), false));
  EXPECT_EQ(response.status, 401);
  EXPECT_NE(response.body.find("id=\"token\""), std::string::npos);
  EXPECT_NE(response.headers.Get("Set-Cookie").value_or("").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(response.body.find("unknown token"), std::string::npos) << "no verifier message";
}

TEST_F(GatewayReviewPageTest, TheQueueEscapesWhatSendersWroteAndShowsPhotosAsUrls) {
  v1::ListReviewQueueResponse queue;
  *queue.add_mentions() = Pending("m-1", "<b>Alice</b>");
  client_.queue_answer = queue;
  const http::HttpResponse response =
      Call(&ReviewPage::Show, Request("site=bob.example&state=unreviewed"));
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(client_.last_queue.state(), v1::REVIEW_STATE_UNREVIEWED);
  EXPECT_NE(response.body.find("&lt;b&gt;Alice&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(response.body.find("<img"), std::string::npos);
  EXPECT_NE(response.body.find("https://alice.example/photo.jpg"), std::string::npos);
  EXPECT_NE(response.body.find("<p>Hi <em>there</em></p>"), std::string::npos)
      << "content the verifier sanitized";
  EXPECT_NE(response.body.find(absl::StrCat("name=\"csrf\" value=\"", Csrf(), "\"")),
            std::string::npos);
  EXPECT_NE(response.body.find("value=\"approve\""), std::string::npos);
  EXPECT_NE(response.body.find("value=\"hide\""), std::string::npos);
  EXPECT_EQ(response.body.find("value=\"unhide\""), std::string::npos);
}

TEST_F(GatewayReviewPageTest, AChangeNeedsTheSessionsCsrfToken) {
  const std::string form = "site=bob.example&state=unreviewed&mention_id=m-1&action=approve";
  http::HttpResponse response = Call(&ReviewPage::Act, Request("", form));
  EXPECT_EQ(response.status, 403);
  response = Call(&ReviewPage::Act, Request("", absl::StrCat(form, "&csrf=", std::string(64, '0'))));
  EXPECT_EQ(response.status, 403);
  EXPECT_TRUE(client_.reviews.empty()) << "nothing reached the verifier";

  response = Call(&ReviewPage::Act,
                  Request("", absl::StrCat(form, "&csrf=", Csrf(), "&note=a+friend")));
  EXPECT_EQ(response.status, 303);
  EXPECT_EQ(response.headers.Get("Location"), "/admin/review?site=bob.example&state=unreviewed");
  ASSERT_EQ(client_.reviews.size(), 1u);
  EXPECT_EQ(client_.reviews[0].mention_id(), "m-1");
  EXPECT_EQ(client_.reviews[0].action(), v1::REVIEW_ACTION_APPROVE);
  EXPECT_EQ(client_.reviews[0].note(), "a friend");
  EXPECT_EQ(client_.tokens.back(), kReviewTestToken);

  // A token bound to other sites: refused by the verifier, said plainly.
  client_.review_answer = absl::PermissionDeniedError("bound to carol.example");
  response = Call(&ReviewPage::Act, Request("", absl::StrCat(form, "&csrf=", Csrf())));
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.body.find("carol.example"), std::string::npos);
}

TEST_F(GatewayReviewPageTest, MalformedInputIsRefusedBeforeAnyCall) {
  EXPECT_EQ(Call(&ReviewPage::Show, Request("")).status, 400);
  EXPECT_EQ(Call(&ReviewPage::Show, Request("site=bob.example&state=maybe")).status, 400);
  EXPECT_EQ(Call(&ReviewPage::Show, Request("site=bob%20example")).status, 400);
  EXPECT_EQ(Call(&ReviewPage::Act,
                 Request("", absl::StrCat("site=bob.example&mention_id=m-1&action=delete&csrf=",
                                          Csrf())))
                .status,
            400);
  EXPECT_TRUE(client_.tokens.empty());
  // A cookie that is not a token is no session.
  http::HeaderMap headers;
  headers.Add("Cookie", "portcullis_review=pct_x;y");
  EXPECT_EQ(ReviewSessionToken(headers), "pct_x");
  headers.Set("Cookie", "portcullis_review=<script>");
  EXPECT_FALSE(ReviewSessionToken(headers).has_value());
  headers.Set("Cookie", absl::StrCat("portcullis_review=", std::string(300, 'a')));
  EXPECT_FALSE(ReviewSessionToken(headers).has_value());
}

TEST_F(GatewayReviewPageTest, AnOutageIsA503WithRetryAfterAndNoDetail) {
  client_.queue_answer = absl::UnavailableError("connect to 10.0.0.7:50051 failed");
  const http::HttpResponse response = Call(&ReviewPage::Show, Request("site=bob.example"));
  EXPECT_EQ(response.status, 503);
  EXPECT_TRUE(response.headers.Contains("Retry-After"));
  EXPECT_EQ(response.body.find("10.0.0.7"), std::string::npos);
}

}  // namespace
}  // namespace portcullis::gateway
