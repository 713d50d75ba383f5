#include "ingest-gateway/src/webmention_handlers.h"

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
using verifier::v1::GetMentionResponse;
using verifier::v1::SubmitMentionResponse;

constexpr char kForm[] = "application/x-www-form-urlencoded";

class GatewayWebmentionHandlersTest : public ::testing::Test {
 protected:
  http::HttpResponse Submit(absl::string_view body, absl::string_view content_type = kForm) {
    http::HttpRequest request;
    request.method = "POST";
    request.path = "/webmention";
    request.request_id = "test-id";
    if (!content_type.empty()) {
      request.headers.Add("Content-Type", content_type);
    }
    request.body = std::string(body);
    std::optional<http::HttpResponse> got;
    handlers_.Submit(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  http::HttpResponse Status(absl::string_view id, absl::string_view accept = "") {
    http::HttpRequest request;
    if (!accept.empty()) {
      request.headers.Add("Accept", accept);
    }
    request.method = "GET";
    request.path = std::string("/webmention/status/") + std::string(id);
    request.path_param = std::string(id);
    std::optional<http::HttpResponse> got;
    handlers_.Status(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  static std::string ErrorCode(const http::HttpResponse& response) {
    return std::string(boost::json::parse(response.body).at("error").as_string());
  }

  void Accept(absl::string_view id) {
    SubmitMentionResponse accepted;
    accepted.set_decision(verifier::v1::DECISION_ACCEPTED);
    accepted.set_mention_id(std::string(id));
    accepted.set_state(verifier::v1::MENTION_STATE_PENDING);
    accepted.set_created(true);
    verifier_.submit_result = accepted;
  }

  testing::FakeVerifierClient verifier_;
  WebmentionHandlers handlers_{verifier_, 7};
};

constexpr char kId[] = "0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c11";
constexpr char kIdForLimits[] = "0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c12";

// Handlers with rate limits and a clock the test moves.
class GatewayWebmentionRateLimitTest : public GatewayWebmentionHandlersTest {
 protected:
  http::HttpResponse SubmitFrom(const std::string& client, const std::string& source) {
    http::HttpRequest request;
    request.method = "POST";
    request.path = "/webmention";
    request.client_address = client;
    request.headers.Add("Content-Type", kForm);
    request.body = "source=" + source + "&target=https%3A%2F%2Fbob.example%2F";
    std::optional<http::HttpResponse> got;
    limited_.Submit(request, [&](http::HttpResponse response) { got = std::move(response); });
    return got.value_or(http::HttpResponse{});
  }

  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  RateLimiter per_client_{{/*tokens_per_second=*/0.1, /*burst=*/2}, 100};
  RateLimiter per_source_{{/*tokens_per_second=*/0.01, /*burst=*/1}, 100};
  WebmentionHandlers limited_{verifier_, 7,
                              RateLimits{&per_client_, &per_source_, [this] { return now_; }}};
};

TEST_F(GatewayWebmentionRateLimitTest, ClientOverItsRateIs429WithRetryAfter) {
  Accept(kIdForLimits);
  EXPECT_EQ(SubmitFrom("198.51.100.1:1000", "https%3A%2F%2Fa1.example%2F").status, 202);
  EXPECT_EQ(SubmitFrom("198.51.100.1:1001", "https%3A%2F%2Fa2.example%2F").status, 202);
  const http::HttpResponse limited = SubmitFrom("198.51.100.1:1002", "https%3A%2F%2Fa3.example%2F");
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(ErrorCode(limited), "rate_limited");
  EXPECT_EQ(limited.headers.Get("Retry-After"), "10");  // One token per 10 s.
  // Another client is not affected; the first one again after the wait.
  EXPECT_EQ(SubmitFrom("198.51.100.2:1000", "https%3A%2F%2Fa4.example%2F").status, 202);
  now_ += absl::Seconds(10);
  EXPECT_EQ(SubmitFrom("198.51.100.1:1003", "https%3A%2F%2Fa5.example%2F").status, 202);
}

TEST_F(GatewayWebmentionRateLimitTest, SourceHostOverItsRateIs429WhateverTheClient) {
  Accept(kIdForLimits);
  EXPECT_EQ(SubmitFrom("198.51.100.1:1", "https%3A%2F%2Fspam.example%2F1").status, 202);
  const http::HttpResponse limited = SubmitFrom("198.51.100.9:1", "https%3A%2F%2FSPAM.example%2F2");
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.headers.Get("Retry-After"), "100");
  EXPECT_EQ(SubmitFrom("198.51.100.9:1", "https%3A%2F%2Fham.example%2F").status, 202);
}

TEST_F(GatewayWebmentionHandlersTest, StatusIsHtmlWhenTheClientPrefersIt) {
  GetMentionResponse found;
  found.mutable_mention()->set_mention_id(kId);
  found.mutable_mention()->set_source("https://a.example/?<b>");
  found.mutable_mention()->set_state(verifier::v1::MENTION_STATE_PENDING);
  verifier_.get_result = found;
  const http::HttpResponse html = Status(kId, "text/html,*/*;q=0.8");
  EXPECT_EQ(html.status, 200);
  EXPECT_EQ(html.headers.Get("Content-Type"), "text/html; charset=utf-8");
  // Nothing loads but the gateway's own stylesheet (no script, no inline style).
  EXPECT_EQ(html.headers.Get("Content-Security-Policy"),
            "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'");
  EXPECT_EQ(html.headers.Get("Vary"), "Accept");
  EXPECT_THAT(html.body, HasSubstr("https://a.example/?&lt;b&gt;"));
  EXPECT_THAT(html.body, HasSubstr("PENDING"));

  const http::HttpResponse json = Status(kId, "application/json");
  EXPECT_EQ(json.status, 200);
  EXPECT_THAT(std::string(json.headers.Get("Content-Type").value_or("")),
              HasSubstr("application/json"));

  const http::HttpResponse refused = Status(kId, "image/png");
  EXPECT_EQ(refused.status, 406);
  EXPECT_EQ(ErrorCode(refused), "not_acceptable");
}

TEST_F(GatewayWebmentionHandlersTest, AcceptedIs202WithLocationAndStatusUrl) {
  Accept(kId);
  const http::HttpResponse response =
      Submit("source=https%3A%2F%2Fa.example%2Fpost&target=https%3A%2F%2Fb.example%2F");
  EXPECT_EQ(response.status, 202);
  const std::string status_url = std::string("/webmention/status/") + kId;
  EXPECT_EQ(response.headers.Get("Location"), status_url);
  const boost::json::value body = boost::json::parse(response.body);
  EXPECT_EQ(body.at("status").as_string(), "accepted");
  EXPECT_EQ(body.at("mention_id").as_string(), kId);
  EXPECT_EQ(body.at("state").as_string(), "PENDING");
  EXPECT_EQ(body.at("status_url").as_string(), status_url);
  ASSERT_EQ(verifier_.submits.size(), 1u);
  EXPECT_EQ(verifier_.submits[0].source(), "https://a.example/post");
  EXPECT_EQ(verifier_.submits[0].target(), "https://b.example/");
}

TEST_F(GatewayWebmentionHandlersTest, ContentTypeParametersAreAllowed) {
  Accept(kId);
  EXPECT_EQ(Submit("source=a&target=b", "Application/X-WWW-Form-URLEncoded; charset=utf-8").status,
            202);
}

TEST_F(GatewayWebmentionHandlersTest, OtherContentTypesAre400) {
  Accept(kId);
  for (absl::string_view type : {"application/json", "text/plain", "",
                                 "application/x-www-form-urlencodedx", "multipart/form-data"}) {
    const http::HttpResponse response = Submit("source=a&target=b", type);
    EXPECT_EQ(response.status, 400) << type;
    EXPECT_EQ(ErrorCode(response), "unsupported_content_type") << type;
  }
  EXPECT_TRUE(verifier_.submits.empty());
}

TEST_F(GatewayWebmentionHandlersTest, MissingAndDuplicatedParametersAre400) {
  Accept(kId);
  EXPECT_EQ(ErrorCode(Submit("target=b")), "missing_source");
  EXPECT_EQ(ErrorCode(Submit("source=a")), "missing_target");
  EXPECT_EQ(ErrorCode(Submit("")), "missing_source");
  EXPECT_EQ(ErrorCode(Submit("source=a&source=c&target=b")), "duplicate_source");
  EXPECT_EQ(ErrorCode(Submit("source=a&target=b&target=b")), "duplicate_target");
  EXPECT_EQ(Submit("source=a&target=b&target=b").status, 400);
  EXPECT_TRUE(verifier_.submits.empty());
}

TEST_F(GatewayWebmentionHandlersTest, MalformedFormIs400) {
  const http::HttpResponse response = Submit("source=%zz&target=b");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(ErrorCode(response), "invalid_form");
  EXPECT_EQ(ErrorCode(Submit("source=%FF&target=b")), "invalid_form");
}

TEST_F(GatewayWebmentionHandlersTest, RejectionPassesReasonThrough) {
  SubmitMentionResponse rejected;
  rejected.set_decision(verifier::v1::DECISION_REJECTED);
  rejected.set_reason("same_source_and_target");
  rejected.set_reason_description("source and target are the same page");
  verifier_.submit_result = rejected;
  const http::HttpResponse response = Submit("source=a&target=a");
  EXPECT_EQ(response.status, 400);
  const boost::json::value body = boost::json::parse(response.body);
  EXPECT_EQ(body.at("error").as_string(), "same_source_and_target");
  EXPECT_EQ(body.at("error_description").as_string(), "source and target are the same page");
}

TEST_F(GatewayWebmentionHandlersTest, UnavailableIs503WithRetryAfterAndNoInternalDetail) {
  verifier_.submit_result = absl::UnavailableError("failed to connect to 10.1.2.3:50051");
  const http::HttpResponse response = Submit("source=a&target=b");
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "7");
  EXPECT_EQ(ErrorCode(response), "unavailable");
  EXPECT_THAT(response.body, Not(HasSubstr("10.1.2.3")));
}

TEST_F(GatewayWebmentionHandlersTest, DeadlineExceededIs503) {
  verifier_.submit_result = absl::DeadlineExceededError("Deadline Exceeded");
  const http::HttpResponse response = Submit("source=a&target=b");
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "7");
  EXPECT_THAT(response.body, Not(HasSubstr("Deadline Exceeded")));
}

TEST_F(GatewayWebmentionHandlersTest, InternalErrorIs500WithoutDetail) {
  verifier_.submit_result = absl::InternalError("pq: relation \"mentions\" does not exist");
  const http::HttpResponse response = Submit("source=a&target=b");
  EXPECT_EQ(response.status, 500);
  EXPECT_THAT(response.body, Not(HasSubstr("mentions")));
  EXPECT_FALSE(response.headers.Get("Retry-After").has_value());
}

TEST_F(GatewayWebmentionHandlersTest, StatusReturnsTheMention) {
  GetMentionResponse got;
  verifier::v1::Mention& mention = *got.mutable_mention();
  mention.set_mention_id(kId);
  mention.set_source("https://a.example/post");
  mention.set_target("https://b.example/");
  mention.set_state(verifier::v1::MENTION_STATE_FAILED);
  mention.set_reason("no_link");
  mention.mutable_created_at()->set_seconds(1700000000);
  mention.mutable_updated_at()->set_seconds(1700000060);
  mention.mutable_updated_at()->set_nanos(500000000);
  verifier_.get_result = got;

  const http::HttpResponse response = Status(kId);
  EXPECT_EQ(response.status, 200);
  const boost::json::value body = boost::json::parse(response.body);
  EXPECT_EQ(body.at("mention_id").as_string(), kId);
  EXPECT_EQ(body.at("source").as_string(), "https://a.example/post");
  EXPECT_EQ(body.at("target").as_string(), "https://b.example/");
  EXPECT_EQ(body.at("state").as_string(), "FAILED");
  EXPECT_EQ(body.at("reason").as_string(), "no_link");
  EXPECT_EQ(body.at("created_at").as_string(), "2023-11-14T22:13:20Z");
  EXPECT_EQ(body.at("updated_at").as_string(), "2023-11-14T22:14:20.5Z");
  ASSERT_EQ(verifier_.gets.size(), 1u);
  EXPECT_EQ(verifier_.gets[0].mention_id(), kId);
}

TEST_F(GatewayWebmentionHandlersTest, StatusJsonCarriesTypeAuthorAndDiagnostic) {
  GetMentionResponse got;
  verifier::v1::Mention& mention = *got.mutable_mention();
  mention.set_mention_id(kId);
  mention.set_state(verifier::v1::MENTION_STATE_FAILED);
  mention.set_reason("no_link");
  mention.add_links_to_target_host("https://b.example/post-10");
  verifier_.get_result = got;
  const boost::json::value failed = boost::json::parse(Status(kId).body);
  EXPECT_EQ(failed.at("links_to_target_host").as_array().size(), 1u);
  EXPECT_EQ(failed.at("links_to_target_host").at(0), "https://b.example/post-10");
  EXPECT_EQ(failed.at("type"), "");
  EXPECT_FALSE(failed.as_object().contains("author"));

  mention.set_state(verifier::v1::MENTION_STATE_VERIFIED);
  mention.set_type(verifier::v1::MENTION_TYPE_LIKE);
  mention.clear_links_to_target_host();
  mention.mutable_author()->set_name("Alice");
  mention.mutable_verified_at()->set_seconds(1700000000);
  verifier_.get_result = got;
  const boost::json::value verified = boost::json::parse(Status(kId).body);
  EXPECT_EQ(verified.at("type"), "like");
  EXPECT_EQ(verified.at("author").at("name"), "Alice");
  EXPECT_EQ(verified.at("verified_at"), "2023-11-14T22:13:20Z");
}

TEST_F(GatewayWebmentionHandlersTest, StatusNotFoundIs404) {
  verifier_.get_result = absl::NotFoundError("no mention 0b6e...");
  const http::HttpResponse response = Status(kId);
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(ErrorCode(response), "not_found");
}

TEST_F(GatewayWebmentionHandlersTest, StatusOfAMalformedIdIs404WithoutACall) {
  EXPECT_EQ(Status("not-a-uuid!").status, 404);
  EXPECT_EQ(Status(std::string(100, 'a')).status, 404);
  EXPECT_TRUE(verifier_.gets.empty());
  verifier_.get_result = absl::InvalidArgumentError("mention_id is not a UUID");
  EXPECT_EQ(Status("abc").status, 404);
}

TEST_F(GatewayWebmentionHandlersTest, StatusUnavailableIs503) {
  verifier_.get_result = absl::UnavailableError("down");
  const http::HttpResponse response = Status(kId);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "7");
}

TEST(GatewayWebmentionHelpersTest, StateName) {
  EXPECT_EQ(StateName(verifier::v1::MENTION_STATE_PENDING), "PENDING");
  EXPECT_EQ(StateName(verifier::v1::MENTION_STATE_VERIFIED), "VERIFIED");
}

}  // namespace
}  // namespace portcullis::gateway
