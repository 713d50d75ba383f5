#include "ingest-gateway/src/ingest_handler.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "common/crypto/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;

constexpr char kItem[] = R"({"id":"item-1","content":"hello","is_synthetic":false})";
// SHA-256 of the canonical form of kItem: {"content":"hello","id":"item-1","is_synthetic":false}.
const std::string kItemHash =
    crypto::ToHex(crypto::Sha256(R"({"content":"hello","id":"item-1","is_synthetic":false})"));

class GatewayIngestHandlerTest : public ::testing::Test {
 protected:
  http::HttpRequest Request(absl::string_view body, absl::string_view source = "feeds.example",
                            absl::string_view content_type = "application/json") const {
    http::HttpRequest request;
    request.method = "POST";
    request.path = "/ingest";
    request.request_id = "test-id";
    if (!content_type.empty()) {
      request.headers.Add("Content-Type", content_type);
    }
    if (!source.empty()) {
      request.headers.Add("X-Provenance-Source", source);
    }
    request.body = std::string(body);
    return request;
  }

  http::HttpResponse Send(const http::HttpRequest& request) {
    std::optional<http::HttpResponse> got;
    handler_.Handle(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  http::HttpResponse Post(absl::string_view body) { return Send(Request(body)); }

  void Decide(v1::IngestDecision decision, absl::string_view reason = "",
              absl::string_view item_id = "") {
    v1::EvaluateIngestResponse response;
    response.set_decision(decision);
    response.set_reason(std::string(reason));
    response.set_item_id(std::string(item_id));
    verifier_.evaluate_result = response;
  }

  static boost::json::object Body(const http::HttpResponse& response) {
    return boost::json::parse(response.body).as_object();
  }
  static std::string Member(const http::HttpResponse& response, const char* name) {
    const boost::json::object body = Body(response);
    const boost::json::value* value = body.if_contains(name);
    return value != nullptr && value->is_string() ? std::string(value->as_string()) : "<absent>";
  }
  static std::string Action(const http::HttpResponse& response) {
    return std::string(response.headers.Get(kIngestActionHeader).value_or("<absent>"));
  }

  // A 422 naming `field`, and no call to the verifier.
  void ExpectViolation(const http::HttpRequest& request, absl::string_view field) {
    const size_t calls = verifier_.evaluations.size();
    const http::HttpResponse response = Send(request);
    EXPECT_EQ(response.status, 422) << request.body << " → " << response.body;
    EXPECT_EQ(Member(response, "error"), "schema_violation") << response.body;
    EXPECT_EQ(Member(response, "field"), field) << response.body;
    EXPECT_NE(Member(response, "error_description"), "") << response.body;
    EXPECT_EQ(verifier_.evaluations.size(), calls) << request.body;
  }

  testing::FakeVerifierClient verifier_;
  IngestHandler handler_{verifier_, {.max_body_bytes = 4096,
                                     .retry_after_seconds = 5,
                                     .retry_after = [] { return 6; }}};
};

// --- the decision table -------------------------------------------------------------------------

TEST_F(GatewayIngestHandlerTest, AcceptedIs202Accept) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  const http::HttpResponse response = Post(kItem);
  EXPECT_EQ(response.status, 202);
  EXPECT_EQ(Action(response), "accept");
  EXPECT_EQ(Member(response, "status"), "accepted");
  EXPECT_EQ(Member(response, "item_id"), "item-1");
  EXPECT_EQ(Member(response, "content_hash"), kItemHash);
  EXPECT_EQ(response.headers.Get("Content-Type").value_or(""), "application/json");
}

TEST_F(GatewayIngestHandlerTest, DroppedIs200DropWithReason) {
  Decide(v1::INGEST_DECISION_DROPPED, "invalid_provenance_signature");
  const http::HttpResponse response = Post(kItem);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Action(response), "drop");
  EXPECT_EQ(Member(response, "status"), "dropped");
  EXPECT_EQ(Member(response, "reason"), "invalid_provenance_signature");
  EXPECT_EQ(Member(response, "item_id"), "item-1");
  EXPECT_EQ(Member(response, "content_hash"), kItemHash);
}

TEST_F(GatewayIngestHandlerTest, DropWithoutReasonSaysUnverifiedSyntheticContent) {
  Decide(v1::INGEST_DECISION_DROPPED);
  EXPECT_EQ(Member(Post(kItem), "reason"), "unverified_synthetic_content");
}

TEST_F(GatewayIngestHandlerTest, DuplicateIs200WithTheOriginalDecisionAndItem) {
  Decide(v1::INGEST_DECISION_DUPLICATE, "dropped:unverified_synthetic_content", "original-id");
  const http::HttpResponse response = Post(kItem);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(Action(response), "duplicate");
  EXPECT_EQ(Member(response, "status"), "acknowledged_duplicate");
  EXPECT_EQ(Member(response, "reason"), "dropped:unverified_synthetic_content");
  EXPECT_EQ(Member(response, "item_id"), "original-id");
  EXPECT_EQ(Member(response, "content_hash"), kItemHash);
}

// --- repeats of accepted items, answered by the gateway -------------------------------------------

class GatewayAcceptedDuplicateTest : public GatewayIngestHandlerTest {
 protected:
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  IngestHandler cached_{verifier_, {.max_body_bytes = 4096,
                                    .retry_after = [] { return 6; },
                                    .accepted_duplicate_ttl = absl::Seconds(2),
                                    .accepted_duplicate_max_entries = 3,
                                    .clock = [this] { return now_; }}};

  http::HttpResponse PostCached(absl::string_view body, absl::string_view source = "feeds.example") {
    std::optional<http::HttpResponse> got;
    cached_.Handle(Request(body, source),
                   [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }
};

TEST_F(GatewayAcceptedDuplicateTest, ARepeatOfAnAcceptedItemIsAnsweredAsTheVerifierWould) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(PostCached(kItem).status, 202);
  ASSERT_EQ(verifier_.evaluations.size(), 1u);
  // The verifier's own answer to a repeat, for comparison...
  Decide(v1::INGEST_DECISION_DUPLICATE, "accepted", "item-1");
  const http::HttpResponse from_verifier = Post(kItem);
  ASSERT_EQ(verifier_.evaluations.size(), 2u);
  // ...and the cached one: the same status, headers and body, and no call.
  const http::HttpResponse cached = PostCached(
      R"({ "is_synthetic":false, "content":"hello", "id":"item-1" })");  // Reordered: one hash.
  EXPECT_EQ(verifier_.evaluations.size(), 2u);
  EXPECT_EQ(cached.status, from_verifier.status);
  EXPECT_EQ(cached.body, from_verifier.body);
  EXPECT_EQ(Action(cached), "duplicate");
  EXPECT_EQ(Member(cached, "reason"), "accepted");
  EXPECT_EQ(Member(cached, "item_id"), "item-1");
  EXPECT_EQ(Member(cached, "content_hash"), kItemHash);
  // Another publisher's identical item is its own decision.
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(PostCached(kItem, "other.example").status, 202);
  EXPECT_EQ(verifier_.evaluations.size(), 3u);
}

// Disabling a publisher answers 403 to its repeats no later than the TTL after, as the
// verifier's publisher cache does; drops, quarantines and errors are never cached.
TEST_F(GatewayAcceptedDuplicateTest, ThePublisherDisabledShowsWithinTheTtl) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(PostCached(kItem).status, 202);
  Decide(v1::INGEST_DECISION_UNKNOWN_PUBLISHER);  // Disabled now.
  now_ += absl::Milliseconds(1999);
  EXPECT_EQ(PostCached(kItem).status, 200);
  EXPECT_EQ(verifier_.evaluations.size(), 1u);
  now_ += absl::Milliseconds(1);
  EXPECT_EQ(PostCached(kItem).status, 403);
  EXPECT_EQ(verifier_.evaluations.size(), 2u);
  for (const v1::IngestDecision decision :
       {v1::INGEST_DECISION_DROPPED, v1::INGEST_DECISION_QUARANTINED}) {
    Decide(decision, "invalid_provenance_signature");
    PostCached(kItem);
    PostCached(kItem);
  }
  Decide(v1::INGEST_DECISION_DUPLICATE, "dropped:signature_required", "item-1");
  PostCached(kItem);
  PostCached(kItem);
  verifier_.evaluate_result = absl::UnavailableError("down");
  EXPECT_EQ(PostCached(kItem).status, 503);
  EXPECT_EQ(verifier_.evaluations.size(), 9u);
}

// A byte-identical retry is answered from the hash of its body as delivered, and only when its
// headers are ones ReadIngestItem takes: a bad Content-Type, publisher or provenance header is
// refused as it would be for a first delivery.
TEST_F(GatewayAcceptedDuplicateTest, AByteIdenticalRetryIsADuplicateOnlyWithAcceptableHeaders) {
  constexpr char kDelivered[] = R"({ "id":"item-1", "content":"hello", "is_synthetic":false })";
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(PostCached(kDelivered).status, 202);
  Decide(v1::INGEST_DECISION_DUPLICATE, "accepted", "item-1");
  const http::HttpResponse from_verifier = Post(kDelivered);
  ASSERT_EQ(verifier_.evaluations.size(), 2u);

  const http::HttpResponse retry = PostCached(kDelivered);
  EXPECT_EQ(retry.status, from_verifier.status);
  EXPECT_EQ(retry.body, from_verifier.body);
  EXPECT_EQ(Member(retry, "content_hash"), kItemHash) << "the canonical form's hash, not the body's";
  EXPECT_EQ(verifier_.evaluations.size(), 2u);

  auto send_cached = [&](const http::HttpRequest& request) {
    std::optional<http::HttpResponse> got;
    cached_.Handle(request, [&](http::HttpResponse response) { got = std::move(response); });
    return got.value_or(http::HttpResponse{});
  };
  EXPECT_EQ(send_cached(Request(kDelivered, "feeds.example", "text/plain")).status, 415);
  EXPECT_EQ(send_cached(Request(kDelivered, "")).status, 422);
  http::HttpRequest two_ids = Request(kDelivered);
  two_ids.headers.Add("webhook-id", "msg-1");
  two_ids.headers.Add("webhook-id", "msg-2");
  const http::HttpResponse conflicting = send_cached(two_ids);
  EXPECT_EQ(conflicting.status, 422);
  EXPECT_EQ(Member(conflicting, "field"), "webhook-id");
  EXPECT_EQ(verifier_.evaluations.size(), 2u);
  // Another publisher's byte-identical delivery is its own decision.
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(send_cached(Request(kDelivered, "other.example")).status, 202);
  EXPECT_EQ(verifier_.evaluations.size(), 3u);
}

TEST_F(GatewayAcceptedDuplicateTest, TheCacheIsBounded) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  for (int i = 0; i < 4; ++i) {  // The fourth starts it over (three entries at most).
    PostCached(absl::StrCat(R"({"id":"item-)", i, R"("})"));
  }
  EXPECT_EQ(verifier_.evaluations.size(), 4u);
  PostCached(R"({"id":"item-3"})");
  EXPECT_EQ(verifier_.evaluations.size(), 4u);
  PostCached(R"({"id":"item-0"})");
  EXPECT_EQ(verifier_.evaluations.size(), 5u);
}

TEST_F(GatewayIngestHandlerTest, QuarantinedIs202Quarantine) {
  Decide(v1::INGEST_DECISION_QUARANTINED, "malformed_provenance_timestamp");
  const http::HttpResponse response = Post(kItem);
  EXPECT_EQ(response.status, 202);
  EXPECT_EQ(Action(response), "quarantine");
  EXPECT_EQ(Member(response, "status"), "quarantined");
  EXPECT_EQ(Member(response, "reason"), "malformed_provenance_timestamp");
  EXPECT_EQ(Member(response, "item_id"), "item-1");
  EXPECT_EQ(Member(response, "content_hash"), kItemHash);
}

TEST_F(GatewayIngestHandlerTest, UnknownPublisherIs403WithoutAction) {
  Decide(v1::INGEST_DECISION_UNKNOWN_PUBLISHER);
  const http::HttpResponse response = Post(kItem);
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(Member(response, "error"), "unknown_publisher");
  EXPECT_EQ(Member(response, "item_id"), "item-1");
  EXPECT_FALSE(response.headers.Contains(kIngestActionHeader));
}

TEST_F(GatewayIngestHandlerTest, TransientFailuresAre503RetryWithRetryAfter) {
  for (const absl::Status& failure :
       {absl::UnavailableError("connection refused"), absl::DeadlineExceededError("deadline"),
        absl::AbortedError("serialization failure")}) {
    verifier_.evaluate_result = failure;
    const http::HttpResponse response = Post(kItem);
    EXPECT_EQ(response.status, 503) << failure;
    EXPECT_EQ(Action(response), "retry") << failure;
    EXPECT_EQ(response.headers.Get("Retry-After").value_or(""), "6") << failure;
    EXPECT_EQ(Member(response, "error"), "unavailable");
    EXPECT_EQ(Member(response, "content_hash"), kItemHash);
    // Nothing from inside reaches the sender.
    EXPECT_THAT(response.body, ::testing::Not(::testing::HasSubstr(failure.message())));
  }
}

TEST_F(GatewayIngestHandlerTest, FinalErrorsAreNeither410NorRetried) {
  for (const absl::Status& failure :
       {absl::InternalError("bug"), absl::InvalidArgumentError("bad"), absl::NotFoundError("x"),
        absl::UnimplementedError("old verifier")}) {
    verifier_.evaluate_result = failure;
    const http::HttpResponse response = Post(kItem);
    EXPECT_NE(response.status, 410) << failure;
    EXPECT_NE(response.status, 503) << failure;
    EXPECT_FALSE(response.headers.Contains("Retry-After")) << failure;
    EXPECT_FALSE(response.headers.Contains(kIngestActionHeader)) << failure;
  }
  Decide(v1::INGEST_DECISION_UNSPECIFIED);
  EXPECT_EQ(Post(kItem).status, 500);
}

TEST_F(GatewayIngestHandlerTest, DefaultRetryAfterIsJitteredAroundTheBase) {
  IngestHandler handler(verifier_, {.max_body_bytes = 4096, .retry_after_seconds = 10});
  verifier_.evaluate_result = absl::UnavailableError("down");
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) {
    std::optional<http::HttpResponse> got;
    handler.Handle(Request(kItem), [&](http::HttpResponse r) { got = std::move(r); });
    ASSERT_TRUE(got.has_value());
    int seconds = 0;
    ASSERT_TRUE(absl::SimpleAtoi(got->headers.Get("Retry-After").value_or(""), &seconds));
    EXPECT_GE(seconds, 5);
    EXPECT_LE(seconds, 15);
    seen.insert(seconds);
  }
  EXPECT_GT(seen.size(), 3u) << "Retry-After is not jittered";
  for (int i = 0; i < 50; ++i) {
    EXPECT_GE(JitteredRetryAfter(1), 1);
    EXPECT_LE(JitteredRetryAfter(1), 2);
  }
}

// --- what the verifier is asked -----------------------------------------------------------------

TEST_F(GatewayIngestHandlerTest, SendsTheItemHeadersBodyAndCanonicalForm) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  const std::string body =
      R"({ "metadata": {"lang": "en"}, "id": "item-9", "is_synthetic": true,
           "digital_source_type": "trainedAlgorithmicMedia", "n": 4.50 })";
  http::HttpRequest request = Request(body);
  request.headers.Add("X-Provenance-Signature", "v1a,AAAA v1,BBBB");
  request.headers.Add("webhook-id", "msg_1");
  request.headers.Add("X-Provenance-Id", "msg_1");  // The same field twice, the same value.
  request.headers.Add("X-Provenance-Timestamp", "1700000000");
  Send(request);
  ASSERT_EQ(verifier_.evaluations.size(), 1u);
  const v1::EvaluateIngestRequest& sent = verifier_.evaluations[0];
  EXPECT_EQ(sent.publisher(), "feeds.example");
  EXPECT_EQ(sent.provenance().signature(), "v1a,AAAA v1,BBBB");
  EXPECT_EQ(sent.provenance().message_id(), "msg_1");
  EXPECT_EQ(sent.provenance().timestamp(), "1700000000");
  EXPECT_EQ(sent.raw_body(), body);
  EXPECT_EQ(sent.item_id(), "item-9");
  ASSERT_TRUE(sent.has_is_synthetic());
  EXPECT_TRUE(sent.is_synthetic());
  EXPECT_EQ(sent.digital_source_type(), "trainedAlgorithmicMedia");
  const std::string canonical =
      R"({"digital_source_type":"trainedAlgorithmicMedia","id":"item-9","is_synthetic":true,)"
      R"("metadata":{"lang":"en"},"n":4.5})";
  EXPECT_EQ(sent.canonical_body(), canonical);
  EXPECT_EQ(sent.content_hash(), crypto::ToHex(crypto::Sha256(canonical)));
}

TEST_F(GatewayIngestHandlerTest, StandardWebhooksHeadersAreTheFallback) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  http::HttpRequest request = Request(R"({"id":"a"})");
  request.headers.Add("webhook-signature", "v1,CCCC");
  request.headers.Add("X-Provenance-Id", "msg_2");
  request.headers.Add("webhook-timestamp", "1700000001");
  Send(request);
  ASSERT_EQ(verifier_.evaluations.size(), 1u);
  EXPECT_EQ(verifier_.evaluations[0].provenance().signature(), "v1,CCCC");
  EXPECT_EQ(verifier_.evaluations[0].provenance().message_id(), "msg_2");
  EXPECT_EQ(verifier_.evaluations[0].provenance().timestamp(), "1700000001");
  EXPECT_FALSE(verifier_.evaluations[0].has_is_synthetic());
}

TEST_F(GatewayIngestHandlerTest, SvixHeadersAreTheStandardWebhooksFields) {
  // What a delivery built with the svix library carries, and nothing else.
  Decide(v1::INGEST_DECISION_ACCEPTED);
  http::HttpRequest request = Request(R"({"id":"svix-1"})");
  request.headers.Add("svix-id", "msg_2fXy");
  request.headers.Add("svix-timestamp", "1700000002");
  request.headers.Add("svix-signature", "v1,DDDD");
  Send(request);
  ASSERT_EQ(verifier_.evaluations.size(), 1u);
  EXPECT_EQ(verifier_.evaluations[0].provenance().signature(), "v1,DDDD");
  EXPECT_EQ(verifier_.evaluations[0].provenance().message_id(), "msg_2fXy");
  EXPECT_EQ(verifier_.evaluations[0].provenance().timestamp(), "1700000002");
}

TEST_F(GatewayIngestHandlerTest, OneFieldWithTwoDifferentValuesIs422NamingTheHeader) {
  // Every pair of names of each field, and one name twice.
  for (const ProvenanceHeaderAliases& aliases : kProvenanceHeaderAliases) {
    for (size_t first = 0; first < aliases.names.size(); ++first) {
      for (size_t second = 0; second < aliases.names.size(); ++second) {
        http::HttpRequest request = Request(kItem);
        request.headers.Add(aliases.names[first], "v1,AAAA");
        request.headers.Add(aliases.names[second], "v1,BBBB");
        SCOPED_TRACE(absl::StrCat(aliases.names[first], " + ", aliases.names[second]));
        ExpectViolation(request, aliases.names[std::max(first, second)]);
      }
    }
  }
  // The same value under two names is one field (trimmed), not a conflict.
  Decide(v1::INGEST_DECISION_ACCEPTED);
  http::HttpRequest same = Request(kItem);
  same.headers.Add("webhook-id", "msg_3");
  same.headers.Add("svix-id", " msg_3 ");
  EXPECT_EQ(Send(same).status, 202);
  ASSERT_FALSE(verifier_.evaluations.empty());
  EXPECT_EQ(verifier_.evaluations.back().provenance().message_id(), "msg_3");
}

TEST_F(GatewayIngestHandlerTest, TheAliasesAreTriedStandardThenSvixThenOurs) {
  const std::vector<std::array<absl::string_view, 3>> want = {
      {"webhook-signature", "svix-signature", "X-Provenance-Signature"},
      {"webhook-id", "svix-id", "X-Provenance-Id"},
      {"webhook-timestamp", "svix-timestamp", "X-Provenance-Timestamp"}};
  ASSERT_EQ(std::size(kProvenanceHeaderAliases), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(kProvenanceHeaderAliases[i].names, want[i]);
  }
}

TEST_F(GatewayIngestHandlerTest, ReorderedAndReformattedCopiesHaveOneHash) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  const std::string a = Member(Post(R"({"id":"x","content":"c","metadata":{"b":"1","a":"2"}})"),
                               "content_hash");
  const std::string b = Member(
      Post("{\n  \"metadata\" : { \"a\":\"2\", \"b\":\"1\" },\n  \"content\":\"c\", \"id\":\"x\"\n}"),
      "content_hash");
  const std::string c = Member(Post(R"({"id":"x","content":"d","metadata":{"b":"1","a":"2"}})"),
                               "content_hash");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), 64u);
}

TEST_F(GatewayIngestHandlerTest, UnknownMembersAreAllowed) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(Post(R"({"id":"x","extra":[1,{"deep":null}],"title":"t"})").status, 202);
}

// --- 400 / 413 / 415 ----------------------------------------------------------------------------

TEST_F(GatewayIngestHandlerTest, NotJsonIs400MalformedJson) {
  for (const std::string& body :
       {std::string(""), std::string("not json"), std::string(R"({"id":"x",})"),
        std::string(R"({"id":"x"} trailing)"), std::string("{\"id\":\"\xC3\x28\"}"),
        std::string("{\"id\":\"\xED\xA0\x80\"}"), std::string(R"({"id":"\ud800"})"),
        std::string("{\"id\":\"a\x01\"}")}) {
    const http::HttpResponse response = Post(body);
    EXPECT_EQ(response.status, 400) << body;
    EXPECT_EQ(Member(response, "error"), "malformed_json") << body;
    EXPECT_FALSE(response.headers.Contains(kIngestActionHeader));
  }
  EXPECT_TRUE(verifier_.evaluations.empty());
}

TEST_F(GatewayIngestHandlerTest, NotJsonWinsOverAMissingSource) {
  EXPECT_EQ(Send(Request("nope", "")).status, 400);
}

TEST_F(GatewayIngestHandlerTest, OverTheCapIs413) {
  const std::string big = absl::StrCat(R"({"id":"x","content":")", std::string(4096, 'a'), "\"}");
  const http::HttpResponse response = Post(big);
  EXPECT_EQ(response.status, 413);
  EXPECT_EQ(Member(response, "error"), "payload_too_large");
  EXPECT_TRUE(verifier_.evaluations.empty());
  // Exactly at the cap is fine.
  Decide(v1::INGEST_DECISION_ACCEPTED);
  const std::string prefix = R"({"id":"x","content":")";
  const std::string at_cap = absl::StrCat(prefix, std::string(4096 - prefix.size() - 2, 'a'), "\"}");
  ASSERT_EQ(at_cap.size(), 4096u);
  EXPECT_EQ(Post(at_cap).status, 202);
}

TEST_F(GatewayIngestHandlerTest, NonJsonContentTypeIs415) {
  for (const char* type : {"", "text/plain", "application/x-www-form-urlencoded",
                           "application/json; charset=latin1", "application/jsonx"}) {
    const http::HttpResponse response = Send(Request(kItem, "feeds.example", type));
    EXPECT_EQ(response.status, 415) << type;
    EXPECT_EQ(Member(response, "error"), "unsupported_media_type") << type;
  }
  Decide(v1::INGEST_DECISION_ACCEPTED);
  for (const char* type : {"application/json", "Application/JSON; charset=UTF-8",
                           "application/feed+json", "application/json;charset=\"utf-8\""}) {
    EXPECT_EQ(Send(Request(kItem, "feeds.example", type)).status, 202) << type;
  }
}

// --- 422 schema_violation -----------------------------------------------------------------------

TEST_F(GatewayIngestHandlerTest, MissingOrBadSourceHeader) {
  ExpectViolation(Request(kItem, ""), "X-Provenance-Source");
  ExpectViolation(Request(kItem, "  "), "X-Provenance-Source");
  ExpectViolation(Request(kItem, "has space"), "X-Provenance-Source");
  ExpectViolation(Request(kItem, std::string(129, 'p')), "X-Provenance-Source");
  http::HttpRequest twice = Request(kItem, "a");
  twice.headers.Add("X-Provenance-Source", "b");
  ExpectViolation(twice, "X-Provenance-Source");
}

TEST_F(GatewayIngestHandlerTest, BadIds) {
  ExpectViolation(Request(R"({"content":"c"})"), "/id");
  ExpectViolation(Request(R"({"id":""})"), "/id");
  ExpectViolation(Request(R"({"id":7})"), "/id");
  ExpectViolation(Request(R"({"id":null})"), "/id");
  ExpectViolation(Request(R"({"id":["x"]})"), "/id");
  ExpectViolation(Request(absl::StrCat(R"({"id":")", std::string(257, 'i'), "\"}")), "/id");
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(Post(absl::StrCat(R"({"id":")", std::string(256, 'i'), "\"}")).status, 202);
}

TEST_F(GatewayIngestHandlerTest, WrongTypes) {
  ExpectViolation(Request(R"({"id":"x","content":5})"), "/content");
  ExpectViolation(Request(R"({"id":"x","content":{"text":"a"}})"), "/content");
  ExpectViolation(Request(R"({"id":"x","is_synthetic":"true"})"), "/is_synthetic");
  ExpectViolation(Request(R"({"id":"x","is_synthetic":1})"), "/is_synthetic");
  ExpectViolation(Request(R"({"id":"x","is_synthetic":null})"), "/is_synthetic");
  ExpectViolation(Request(R"({"id":"x","metadata":"m"})"), "/metadata");
  ExpectViolation(Request(R"({"id":"x","metadata":["a"]})"), "/metadata");
  ExpectViolation(Request(R"({"id":"x","metadata":{"a":"1","b/c":2}})"), "/metadata/b~1c");
  ExpectViolation(Request(R"({"id":"x","digital_source_type":3})"), "/digital_source_type");
  ExpectViolation(Request(R"(["id","x"])"), "");
  ExpectViolation(Request(R"("x")"), "");
}

// --- media (issue 19) ----------------------------------------------------------------------------

TEST_F(GatewayIngestHandlerTest, MediaIsDecodedAndSentToTheVerifier) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  // "/9j/" is FF D8 FF (a JPEG start); "iVBORw==" is 89 50 4E 47.
  EXPECT_EQ(Post(R"({"id":"m","media":[{"content_type":"image/jpeg","data":"/9j/"},)"
                 R"({"content_type":"image/png","data":"iVBORw=="}]})")
                .status,
            202);
  ASSERT_EQ(verifier_.evaluations.size(), 1u);
  const v1::EvaluateIngestRequest& sent = verifier_.evaluations.back();
  ASSERT_EQ(sent.media_size(), 2);
  EXPECT_EQ(sent.media(0).content_type(), "image/jpeg");
  EXPECT_EQ(sent.media(0).data(), "\xFF\xD8\xFF");
  EXPECT_EQ(sent.media(1).content_type(), "image/png");
  EXPECT_EQ(sent.media(1).data(), "\x89PNG");
  // The media is part of the canonical body, so of the idempotency key.
  EXPECT_NE(sent.canonical_body().find("/9j/"), std::string::npos);
}

TEST_F(GatewayIngestHandlerTest, ItemsDifferingOnlyInMediaHaveDifferentHashes) {
  Decide(v1::INGEST_DECISION_ACCEPTED);
  ASSERT_EQ(Post(R"({"id":"m","media":[{"content_type":"image/jpeg","data":"/9j/"}]})").status,
            202);
  ASSERT_EQ(Post(R"({"id":"m","media":[{"content_type":"image/jpeg","data":"/9j+"}]})").status,
            202);
  ASSERT_EQ(verifier_.evaluations.size(), 2u);
  EXPECT_NE(verifier_.evaluations[0].content_hash(), verifier_.evaluations[1].content_hash());
}

TEST_F(GatewayIngestHandlerTest, BadMediaIs422NamingTheElement) {
  ExpectViolation(Request(R"({"id":"x","media":"/9j/"})"), "/media");
  ExpectViolation(Request(R"({"id":"x","media":{"content_type":"image/png"}})"), "/media");
  ExpectViolation(Request(R"({"id":"x","media":["/9j/"]})"), "/media/0");
  ExpectViolation(Request(R"({"id":"x","media":[{"data":"/9j/"}]})"), "/media/0/content_type");
  ExpectViolation(Request(R"({"id":"x","media":[{"content_type":5,"data":"/9j/"}]})"),
                  "/media/0/content_type");
  ExpectViolation(Request(R"({"id":"x","media":[{"content_type":"image/gif","data":"R0lG"}]})"),
                  "/media/0/content_type");
  ExpectViolation(Request(R"({"id":"x","media":[{"content_type":"image/jpeg"}]})"),
                  "/media/0/data");
  ExpectViolation(Request(R"({"id":"x","media":[{"content_type":"image/jpeg","data":7}]})"),
                  "/media/0/data");
  // Not base64, unpadded, with whitespace, URL-safe alphabet, empty.
  for (const char* data : {"!!!!", "iVBORw", "iVBO Rw==", "_9j_", ""}) {
    ExpectViolation(
        Request(absl::StrCat(R"({"id":"x","media":[{"content_type":"image/jpeg","data":"/9j/"},)",
                             R"({"content_type":"image/png","data":")", data, R"("}]})")),
        "/media/1/data");
  }
}

TEST_F(GatewayIngestHandlerTest, TooManyMediaElementsIs422) {
  std::string elements;
  for (size_t i = 0; i <= kMaxMediaElements; ++i) {
    absl::StrAppend(&elements, i == 0 ? "" : ",", R"({"content_type":"image/jpeg","data":"/9j/"})");
  }
  http::HttpRequest request = Request(absl::StrCat(R"({"id":"x","media":[)", elements, "]}"));
  ExpectViolation(request, "/media");
  Decide(v1::INGEST_DECISION_ACCEPTED);
  const size_t cut = elements.rfind(",{");
  EXPECT_EQ(Post(absl::StrCat(R"({"id":"x","media":[)", elements.substr(0, cut), "]}")).status,
            202);
}

TEST_F(GatewayIngestHandlerTest, AMediaElementOverItsOwnCapIs422) {
  testing::FakeVerifierClient verifier;
  IngestHandler handler(verifier, {.max_body_bytes = 4096, .max_media_element_bytes = 6});
  auto post = [&](absl::string_view data) {
    std::optional<http::HttpResponse> got;
    handler.Handle(Request(absl::StrCat(R"({"id":"x","media":[{"content_type":"image/jpeg",)",
                                        R"("data":")", data, R"("}]})")),
                   [&](http::HttpResponse response) { got = std::move(response); });
    return got.value_or(http::HttpResponse{});
  };
  const http::HttpResponse over = post("AAAAAAAAAA==");  // 7 bytes
  EXPECT_EQ(over.status, 422);
  EXPECT_EQ(Member(over, "field"), "/media/0/data");
  EXPECT_TRUE(verifier.evaluations.empty());
  v1::EvaluateIngestResponse accepted;
  accepted.set_decision(v1::INGEST_DECISION_ACCEPTED);
  verifier.evaluate_result = accepted;
  EXPECT_EQ(post("AAAAAAAA").status, 202);  // 6 bytes
}

TEST_F(GatewayIngestHandlerTest, MediaOverTheBodyCapIs413) {
  // 4 KiB body cap: 4 KiB of base64 does not fit whatever the element cap.
  EXPECT_EQ(Post(absl::StrCat(R"({"id":"x","media":[{"content_type":"image/jpeg","data":")",
                              std::string(4096, 'A'), R"("}]})"))
                .status,
            413);
  EXPECT_TRUE(verifier_.evaluations.empty());
}

TEST_F(GatewayIngestHandlerTest, DuplicateKeysAnywhere) {
  ExpectViolation(Request(R"({"id":"x","id":"y"})"), "/id");
  ExpectViolation(Request(R"({"id":"x","extra":{"k":1,"\u006b":2}})"), "/extra/k");
  ExpectViolation(Request(R"({"id":"x","metadata":{"a":"1","a":"1"}})"), "/metadata/a");
}

TEST_F(GatewayIngestHandlerTest, WhatTheVerifierCannotStoreIsRefusedHere) {
  ExpectViolation(Request(R"({"id":"a\u0000b"})"), "/id");
  ExpectViolation(Request(absl::StrCat(R"({"id":"x","digital_source_type":")",
                                       std::string(1025, 't'), "\"}")),
                  "/digital_source_type");
  http::HttpRequest long_signature = Request(kItem);
  long_signature.headers.Add("X-Provenance-Signature", std::string(8193, 'v'));
  ExpectViolation(long_signature, "X-Provenance-Signature");
}

TEST_F(GatewayIngestHandlerTest, ACanonicalFormThatGrowsPastTheLimitIs413) {
  // 1e20 canonicalizes to 21 digits: 5 bytes in, 22 out.
  std::string numbers = "1e20";
  for (int i = 0; i < 100000; ++i) {
    absl::StrAppend(&numbers, ",1e20");
  }
  IngestHandler handler(verifier_, {.max_body_bytes = kMaxIngestBodyBytes});
  std::optional<http::HttpResponse> got;
  handler.Handle(Request(absl::StrCat(R"({"id":"x","n":[)", numbers, "]}")),
                 [&](http::HttpResponse response) { got = std::move(response); });
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 413);
  EXPECT_EQ(Member(*got, "error"), "payload_too_large");
  EXPECT_TRUE(verifier_.evaluations.empty());
}

TEST_F(GatewayIngestHandlerTest, NumbersOutsideIJsonRange) {
  ExpectViolation(Request(R"({"id":"x","n":1e400})"), "/n");
  ExpectViolation(Request(R"({"id":"x","list":[1,9007199254740993]})"), "/list/1");
  ExpectViolation(Request(R"({"id":"x","n":-0})"), "/n");
  Decide(v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(Post(R"({"id":"x","n":9007199254740992,"m":1e300})").status, 202);
}

}  // namespace
}  // namespace portcullis::gateway
