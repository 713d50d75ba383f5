#include "ingest-gateway/src/answers.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boost/json/object.hpp"
#include "boost/json/parse.hpp"
#include "common/status/status_mapping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest-gateway/src/http/router.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "ingest-gateway/src/mentions_feed.h"
#include "ingest-gateway/src/rate_limiter.h"
#include "ingest-gateway/src/readiness.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(GatewayStatusResponseTest, UnavailableIs503WithRetryAfterAndNoInternalMessage) {
  const http::HttpResponse response =
      ResponseForStatus(absl::UnavailableError("connect to 10.0.0.7:50051 failed"), 9);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "9");
  EXPECT_THAT(response.body, HasSubstr(R"("error":"unavailable")"));
  EXPECT_THAT(response.body, Not(HasSubstr("10.0.0.7")));
}

TEST(GatewayStatusResponseTest, DeadlineExceededIs503) {
  const http::HttpResponse response = ResponseForStatus(absl::DeadlineExceededError("slow"), 5);
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(response.headers.Get("Retry-After"), "5");
}

TEST(GatewayStatusResponseTest, FinalErrorsHaveNoRetryAfter) {
  const http::HttpResponse internal = ResponseForStatus(absl::InternalError("SELECT * ..."), 5);
  EXPECT_EQ(internal.status, 500);
  EXPECT_FALSE(internal.headers.Get("Retry-After").has_value());
  EXPECT_THAT(internal.body, Not(HasSubstr("SELECT")));
  EXPECT_EQ(ResponseForStatus(absl::InvalidArgumentError("x"), 5).status, 400);
  EXPECT_EQ(ResponseForStatus(absl::NotFoundError("x"), 5).status, 404);
}

namespace v1 = verifier::v1;

// The body's `error`, or its `status` for decisions ("" when the body is not a JSON object).
std::string CodeOf(const http::HttpResponse& response) {
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return "";
  }
  for (const char* key : {"error", "status"}) {
    if (const boost::json::value* value = body.as_object().if_contains(key);
        value != nullptr && value->is_string()) {
      return std::string(value->as_string());
    }
  }
  return "";
}

std::string DescriptionOf(const http::HttpResponse& response) {
  boost::system::error_code ec;
  const boost::json::value body = boost::json::parse(response.body, ec);
  if (ec || !body.is_object() || !body.as_object().contains("error_description")) {
    return "";
  }
  return std::string(body.as_object().at("error_description").as_string());
}

// `response` is what the table says for `answer`: status, code, fixed description, headers.
void ExpectAnswer(const http::HttpResponse& response, Answer answer, bool ingest = false) {
  const AnswerRow& row = RowFor(answer);
  SCOPED_TRACE(absl::StrCat("row ", static_cast<int>(answer), " (", row.code, ", ", row.when,
                            "): ", response.body));
  EXPECT_EQ(response.status, row.status);
  if (!row.code.empty()) {
    EXPECT_EQ(CodeOf(response), row.code);
  }
  if (!row.description.empty()) {
    EXPECT_EQ(DescriptionOf(response), row.description);
  }
  EXPECT_EQ(response.headers.Contains("Retry-After"), (row.headers & kRetryAfter) != 0);
  EXPECT_EQ(response.headers.Contains("Location"), (row.headers & kLocation) != 0);
  EXPECT_EQ(response.headers.Contains("Allow"), (row.headers & kAllow) != 0);
  if (ingest && !row.ingest_action.empty()) {
    EXPECT_EQ(response.headers.Get("X-Ingest-Action"), row.ingest_action);
  } else {
    EXPECT_FALSE(response.headers.Contains("X-Ingest-Action"));
  }
}

bool IsError(const AnswerRow& row) { return row.status >= 400; }

http::HttpResponse DecisionBody(absl::string_view status) {
  boost::json::object body;
  body["status"] = boost::json::string_view(status.data(), status.size());
  return http::JsonResponse(0, body);
}

TEST(GatewayAnswerTableTest, EveryRowBuildsItsResponse) {
  std::set<int> seen;
  for (const AnswerRow& row : AnswerTable()) {
    EXPECT_TRUE(seen.insert(static_cast<int>(row.answer)).second) << row.code;
    EXPECT_FALSE(row.when.empty()) << row.code;
    EXPECT_NE(row.status, 410) << "brokers read 410 as \"disable this endpoint\"";
    for (const bool ingest : {false, true}) {
      const AnswerDetails details{.retry_after_seconds = 7,
                                  .location = "/webmention/status/x",
                                  .allow = "GET, POST",
                                  .error = "target_not_found",
                                  .description = "Given with the answer.",
                                  .ingest = ingest};
      const http::HttpResponse response = IsError(row)
                                              ? ErrorAnswer(row.answer, details)
                                              : Answered(row.answer, DecisionBody(row.code),
                                                         {.retry_after_seconds = 7,
                                                          .location = "/webmention/status/x",
                                                          .ingest = ingest});
      ExpectAnswer(response, row.answer, ingest);
      if (row.headers & kRetryAfter) {
        EXPECT_EQ(response.headers.Get("Retry-After"), "7");
      }
      if (IsError(row)) {
        EXPECT_EQ(CodeOf(response), row.code.empty() ? "target_not_found" : row.code);
        EXPECT_EQ(DescriptionOf(response),
                  row.description.empty() ? "Given with the answer." : row.description);
      }
    }
  }
  EXPECT_EQ(seen.size(), AnswerTable().size());
}

TEST(GatewayAnswerTableTest, ErrorRowsHaveACodeAndTheServersRefusalsClose) {
  for (const AnswerRow& row : AnswerTable()) {
    if (IsError(row) && row.answer != Answer::kWebmentionRejected) {
      EXPECT_FALSE(row.code.empty()) << row.when;
    }
  }
  for (Answer answer :
       {Answer::kBadHttp, Answer::kBadTarget, Answer::kBodyTooLarge, Answer::kHeadersTooLarge,
        Answer::kServerBusy, Answer::kTooManyConnections}) {
    EXPECT_TRUE(RowFor(answer).headers & kClose) << RowFor(answer).when;
  }
}

// The kVerifier* rows are built from common/status (VerifierRow), so a row cannot say other than
// its code. What can still go apart is which row a code gets: the one its http_error names. A new
// error word without a row, or codes sharing a word but not its status or Retry-After, would
// answer a sender other than the common mapping says.
TEST(GatewayAnswerTableTest, EveryCodeIsAnsweredWithItsOwnStatusErrorAndRetry) {
  for (int code = 1; code <= 16; ++code) {
    const absl::StatusCode status_code = static_cast<absl::StatusCode>(code);
    const status::StatusMapping& mapping = status::MappingFor(status_code);
    SCOPED_TRACE(absl::StatusCodeToString(status_code));
    const http::HttpResponse response = ResponseForStatus(absl::Status(status_code, "failed"), 3);
    EXPECT_EQ(response.status, mapping.http_status);
    EXPECT_EQ(CodeOf(response), mapping.http_error);
    EXPECT_EQ(response.headers.Contains("Retry-After"), mapping.retryable);
  }
  EXPECT_EQ(VerifierFailure(absl::StatusCode::kOk), Answer::kVerifierInternal);
  EXPECT_EQ(VerifierFailure(static_cast<absl::StatusCode>(999)), Answer::kVerifierInternal);
}

TEST(GatewayAnswerTableTest, TheVerifierRefusingOurTokenIs503NeverA401) {
  const absl::Status status =
      FromVerifierStatus(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown token"));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  const http::HttpResponse response = ResponseForStatus(status, 4);
  ExpectAnswer(response, Answer::kVerifierUnavailable);
  EXPECT_THAT(response.body, Not(HasSubstr("token")));
  // Every other code passes unchanged.
  EXPECT_EQ(FromVerifierStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "x")).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(FromVerifierStatus(grpc::Status::OK).ok());
}

TEST(GatewayAnswerTableTest, GetMentionsUnknownOrUnreadableIdIsNoSuchMention) {
  EXPECT_EQ(GetMentionFailure(absl::StatusCode::kNotFound), Answer::kMentionNotFound);
  EXPECT_EQ(GetMentionFailure(absl::StatusCode::kInvalidArgument), Answer::kMentionNotFound);
  EXPECT_EQ(GetMentionFailure(absl::StatusCode::kUnavailable), Answer::kVerifierUnavailable);
}

// Each handler path, router path and probe yields the row it should.
class GatewayAnswerPathsTest : public ::testing::Test {
 protected:
  static http::HttpResponse Call(
      const std::function<void(const http::HttpRequest&, http::Respond)>& handler,
      const http::HttpRequest& request) {
    std::optional<http::HttpResponse> got;
    handler(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  static http::HttpRequest Form(absl::string_view body, absl::string_view content_type =
                                                            "application/x-www-form-urlencoded") {
    http::HttpRequest request;
    request.method = "POST";
    request.path = kWebmentionPath;
    request.request_id = "answers-test";
    request.client_address = "192.0.2.1:4000";
    request.headers.Add("Content-Type", content_type);
    request.body = std::string(body);
    return request;
  }

  http::HttpResponse Submit(const http::HttpRequest& request) {
    return Call([this](const http::HttpRequest& r,
                       http::Respond respond) { webmention_.Submit(r, std::move(respond)); },
                request);
  }

  http::HttpResponse Status(absl::string_view id, absl::string_view accept = "") {
    http::HttpRequest request;
    request.method = "GET";
    request.path = absl::StrCat(kStatusPathPrefix, id);
    request.path_param = std::string(id);
    request.client_address = "192.0.2.1:4000";
    if (!accept.empty()) {
      request.headers.Add("Accept", accept);
    }
    return Call([this](const http::HttpRequest& r,
                       http::Respond respond) { webmention_.Status(r, std::move(respond)); },
                request);
  }

  http::HttpResponse Ingest(absl::string_view body,
                            absl::string_view content_type = "application/json") {
    http::HttpRequest request;
    request.method = "POST";
    request.path = kIngestPath;
    request.headers.Add("Content-Type", content_type);
    request.headers.Add("X-Provenance-Source", "feeds.example");
    request.body = std::string(body);
    return Call([this](const http::HttpRequest& r,
                       http::Respond respond) { ingest_.Handle(r, std::move(respond)); },
                request);
  }

  http::HttpResponse Feed(absl::string_view query, absl::string_view if_none_match = "") {
    http::HttpRequest request;
    request.method = "GET";
    request.path = kMentionsPath;
    request.query = std::string(query);
    request.client_address = "192.0.2.1:4000";
    if (!if_none_match.empty()) {
      request.headers.Add("If-None-Match", if_none_match);
    }
    return Call([this](const http::HttpRequest& r,
                       http::Respond respond) { mentions_.Handle(r, std::move(respond)); },
                request);
  }

  void Decide(v1::IngestDecision decision) {
    v1::EvaluateIngestResponse response;
    response.set_decision(decision);
    response.set_reason("why");
    verifier_.evaluate_result = response;
  }

  testing::FakeVerifierClient verifier_;
  WebmentionHandlers webmention_{verifier_, 5};
  IngestHandler ingest_{verifier_, {.retry_after = [] { return 5; }}};
  MentionsFeed mentions_{verifier_, 5};
};

constexpr char kGoodForm[] = "source=https%3A%2F%2Fa.example%2F&target=https%3A%2F%2Fb.example%2F";
constexpr char kItem[] = R"({"id":"item-1"})";

TEST_F(GatewayAnswerPathsTest, Webmention) {
  ExpectAnswer(Submit(Form(kGoodForm, "text/plain")), Answer::kUnsupportedContentType);
  ExpectAnswer(Submit(Form("source=%zz")), Answer::kInvalidForm);
  ExpectAnswer(Submit(Form("target=https%3A%2F%2Fb.example%2F")), Answer::kMissingSource);
  ExpectAnswer(Submit(Form(absl::StrCat(kGoodForm, "&source=x"))), Answer::kDuplicateSource);
  ExpectAnswer(Submit(Form("source=https%3A%2F%2Fa.example%2F")), Answer::kMissingTarget);
  ExpectAnswer(Submit(Form(absl::StrCat(kGoodForm, "&target=x"))), Answer::kDuplicateTarget);

  verifier_.submit_result = absl::UnavailableError("down");
  ExpectAnswer(Submit(Form(kGoodForm)), Answer::kVerifierUnavailable);
  verifier_.submit_result = absl::ResourceExhaustedError("queue full");
  ExpectAnswer(Submit(Form(kGoodForm)), Answer::kVerifierRateLimited);
  verifier_.submit_result = v1::SubmitMentionResponse();  // No decision.
  ExpectAnswer(Submit(Form(kGoodForm)), Answer::kVerifierInternal);

  v1::SubmitMentionResponse rejected;
  rejected.set_decision(v1::DECISION_REJECTED);
  rejected.set_reason("target_not_found");
  rejected.set_reason_description("The target is not a page of a site served here.");
  verifier_.submit_result = rejected;
  const http::HttpResponse refused = Submit(Form(kGoodForm));
  ExpectAnswer(refused, Answer::kWebmentionRejected);
  EXPECT_EQ(CodeOf(refused), "target_not_found");

  v1::SubmitMentionResponse accepted;
  accepted.set_decision(v1::DECISION_ACCEPTED);
  accepted.set_mention_id("0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c11");
  verifier_.submit_result = accepted;
  const http::HttpResponse ok = Submit(Form(kGoodForm));
  ExpectAnswer(ok, Answer::kWebmentionAccepted);
  EXPECT_EQ(ok.headers.Get("Location"), "/webmention/status/0b6e3f5e-8a44-4a43-9a3c-2f1d9b7b0c11");
}

TEST_F(GatewayAnswerPathsTest, RateLimits) {
  RateLimiter limiter({.tokens_per_second = 0.001, .burst = 1}, 100);
  const absl::Time now = absl::Now();
  WebmentionHandlers limited(verifier_, 5, {.per_client = &limiter, .now = [now] { return now; }});
  const auto submit = [&] {
    return Call([&](const http::HttpRequest& r,
                    http::Respond respond) { limited.Submit(r, std::move(respond)); },
                Form(kGoodForm, "text/plain"));
  };
  ExpectAnswer(submit(), Answer::kUnsupportedContentType);  // The one token.
  ExpectAnswer(submit(), Answer::kRateLimited);
  ExpectAnswer(RateLimitedResponse(absl::Milliseconds(1500), "address"), Answer::kRateLimited);
  EXPECT_EQ(RateLimitedResponse(absl::Milliseconds(1500), "address").headers.Get("Retry-After"),
            "2");
}

TEST_F(GatewayAnswerPathsTest, MentionStatus) {
  ExpectAnswer(Status("not a uuid!"), Answer::kMentionNotFound);
  ExpectAnswer(Status("0b6e3f5e", "image/png"), Answer::kStatusNotAcceptable);
  verifier_.get_result = absl::NotFoundError("no row");
  ExpectAnswer(Status("0b6e3f5e"), Answer::kMentionNotFound);
  verifier_.get_result = absl::InvalidArgumentError("bad id");
  ExpectAnswer(Status("0b6e3f5e"), Answer::kMentionNotFound);
  verifier_.get_result = absl::DeadlineExceededError("slow");
  ExpectAnswer(Status("0b6e3f5e"), Answer::kVerifierUnavailable);
  v1::GetMentionResponse found;
  found.mutable_mention()->set_mention_id("0b6e3f5e");
  verifier_.get_result = found;
  ExpectAnswer(Status("0b6e3f5e"), Answer::kMentionStatus);
  ExpectAnswer(Status("0b6e3f5e", "text/html"), Answer::kMentionStatus);
}

TEST_F(GatewayAnswerPathsTest, MentionsFeed) {
  ExpectAnswer(Feed(""), Answer::kInvalidFeedQuery);
  verifier_.list_result = absl::UnavailableError("down");
  ExpectAnswer(Feed("site=b.example"), Answer::kVerifierUnavailable);
  verifier_.list_result = v1::ListMentionsResponse();
  const http::HttpResponse feed = Feed("site=b.example");
  ExpectAnswer(feed, Answer::kFeed);
  ExpectAnswer(Feed("site=b.example", *feed.headers.Get("ETag")), Answer::kFeedNotModified);
  ExpectAnswer(MentionsPreflightResponse(), Answer::kFeedPreflight);
}

TEST_F(GatewayAnswerPathsTest, Ingest) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  ExpectAnswer(Ingest(kItem), Answer::kIngestAccepted, true);
  Decide(v1::INGEST_DECISION_QUARANTINED);
  ExpectAnswer(Ingest(kItem), Answer::kIngestQuarantined, true);
  Decide(v1::INGEST_DECISION_DROPPED);
  ExpectAnswer(Ingest(kItem), Answer::kIngestDropped, true);
  Decide(v1::INGEST_DECISION_DUPLICATE);
  ExpectAnswer(Ingest(kItem), Answer::kIngestDuplicate, true);
  Decide(v1::INGEST_DECISION_UNKNOWN_PUBLISHER);
  ExpectAnswer(Ingest(kItem), Answer::kUnknownPublisher, true);
  Decide(v1::INGEST_DECISION_UNSPECIFIED);
  ExpectAnswer(Ingest(kItem), Answer::kVerifierInternal, true);
  verifier_.evaluate_result = absl::UnavailableError("db down");
  ExpectAnswer(Ingest(kItem), Answer::kVerifierUnavailable, true);
  verifier_.evaluate_result = absl::DeadlineExceededError("slow");
  ExpectAnswer(Ingest(kItem), Answer::kVerifierUnavailable, true);

  ExpectAnswer(Ingest("{nope"), Answer::kMalformedJson, true);
  ExpectAnswer(Ingest(kItem, "text/plain"), Answer::kUnsupportedMediaType, true);
  ExpectAnswer(Ingest(R"({"id":""})"), Answer::kSchemaViolation, true);
  ExpectAnswer(Ingest(std::string(kMaxIngestBodyBytes + 1, ' ')), Answer::kItemTooLarge, true);
}

TEST_F(GatewayAnswerPathsTest, RouterAndProbes) {
  http::Router router;
  router.Add("GET", "/here",
             [](const http::HttpRequest&, http::Respond respond) { respond(HealthzResponse()); });
  const auto route = [&](absl::string_view method, absl::string_view path) {
    http::HttpRequest request;
    request.method = std::string(method);
    request.path = std::string(path);
    return Call([&](const http::HttpRequest& r,
                    http::Respond respond) { router.Handle(r, std::move(respond)); },
                request);
  };
  ExpectAnswer(route("GET", "/nowhere"), Answer::kNoRoute);
  ExpectAnswer(route("POST", "/here"), Answer::kMethodNotAllowed);
  ExpectAnswer(route("GET", "/here"), Answer::kHealthy);

  class Serving final : public HealthChecker {
   public:
    absl::Status Check(absl::Duration) override { return absl::OkStatus(); }
  } serving;
  Readiness readiness(serving, absl::Hours(1), absl::Seconds(1));
  ExpectAnswer(readiness.ReadyzResponse(), Answer::kNotReadyVerifier);  // Before any check.
  readiness.PollOnce();
  ExpectAnswer(readiness.ReadyzResponse(), Answer::kReady);
  readiness.SetDraining();
  ExpectAnswer(readiness.ReadyzResponse(), Answer::kNotReadyDraining);
}

}  // namespace
}  // namespace portcullis::gateway
