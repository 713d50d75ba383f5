#include "verifier-service/src/server/ingest_rpcs.h"

#include "common/crypto/sha256.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

v1::EvaluateIngestRequest ValidRequest() {
  v1::EvaluateIngestRequest request;
  request.set_publisher("feed.example:main_1-2");
  request.set_item_id("item-1");
  request.set_raw_body(R"({"id": "item-1"})");
  request.set_canonical_body(R"({"id":"item-1"})");
  request.set_content_hash(crypto::ToHex(crypto::Sha256(request.canonical_body())));
  request.mutable_provenance()->set_signature("v1a,abc");
  request.mutable_provenance()->set_message_id("msg");
  request.mutable_provenance()->set_timestamp("1700000000");
  request.set_is_synthetic(false);
  request.set_digital_source_type("digitalCapture");
  return request;
}

bool Invalid(const v1::EvaluateIngestRequest& request) {
  return absl::IsInvalidArgument(Validate(request).status());
}

TEST(IngestRpcTest, AValidRequestBecomesADelivery) {
  absl::StatusOr<store::DeliveryRecord> delivery = Validate(ValidRequest());
  ASSERT_TRUE(delivery.ok()) << delivery.status();
  EXPECT_EQ(delivery->publisher, "feed.example:main_1-2");
  EXPECT_EQ(delivery->item_id, "item-1");
  EXPECT_EQ(delivery->raw_body, R"({"id": "item-1"})");
  EXPECT_EQ(delivery->signature_header, "v1a,abc");
  EXPECT_EQ(delivery->message_id, "msg");
  EXPECT_EQ(delivery->timestamp, "1700000000");
  ASSERT_TRUE(delivery->is_synthetic.has_value());
  EXPECT_FALSE(*delivery->is_synthetic);
  v1::EvaluateIngestRequest unset = ValidRequest();
  unset.clear_is_synthetic();
  EXPECT_FALSE(Validate(unset)->is_synthetic.has_value());
}

TEST(IngestRpcTest, EveryRuleIsEnforced) {
  auto with = [](auto change) {
    v1::EvaluateIngestRequest request = ValidRequest();
    change(request);
    return request;
  };
  using R = v1::EvaluateIngestRequest;
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_publisher(""); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_publisher(std::string(129, 'p')); })));
  EXPECT_FALSE(Invalid(with([](R& r) { r.set_publisher(std::string(128, 'p')); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_publisher("feed example"); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_publisher("feed/x"); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_item_id(""); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_item_id(std::string(257, 'i')); })));
  EXPECT_FALSE(Invalid(with([](R& r) { r.set_item_id(std::string(256, 'i')); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_item_id(std::string("a\0b", 3)); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_content_hash(std::string(63, 'a')); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_content_hash(std::string(64, 'A')); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_content_hash(std::string(64, 'g')); })));
  // The hash must be the canonical body's when that is given.
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_content_hash(std::string(64, 'a')); })));
  EXPECT_FALSE(Invalid(with([](R& r) {
    r.clear_canonical_body();
    r.set_content_hash(std::string(64, 'a'));
  })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.clear_raw_body(); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_raw_body(std::string((1 << 20) + 1, ' ')); })));
  EXPECT_FALSE(Invalid(with([](R& r) { r.set_raw_body(std::string(1 << 20, ' ')); })));
  EXPECT_TRUE(Invalid(with([](R& r) {
    r.mutable_provenance()->set_signature(std::string(kMaxProvenanceHeaderBytes + 1, 'v'));
  })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.mutable_provenance()->set_message_id({"\0", 1}); })));
  EXPECT_TRUE(Invalid(with([](R& r) { r.set_digital_source_type(std::string(1025, 't')); })));
}

TEST(IngestRpcTest, OutcomesMapOntoTheResponse) {
  ingest::IngestOutcome outcome;
  outcome.verdict = ingest::IngestVerdict::kQuarantined;
  outcome.reason = "missing_provenance_id";
  outcome.item_id = "i";
  outcome.content_hash = std::string(64, 'a');
  outcome.dead_letter_id = "d";
  v1::EvaluateIngestResponse response;
  ToProto(outcome, &response);
  EXPECT_EQ(response.decision(), v1::INGEST_DECISION_QUARANTINED);
  EXPECT_EQ(response.reason(), "missing_provenance_id");
  EXPECT_EQ(response.dead_letter_id(), "d");
  const std::pair<ingest::IngestVerdict, v1::IngestDecision> table[] = {
      {ingest::IngestVerdict::kAccepted, v1::INGEST_DECISION_ACCEPTED},
      {ingest::IngestVerdict::kDropped, v1::INGEST_DECISION_DROPPED},
      {ingest::IngestVerdict::kDuplicate, v1::INGEST_DECISION_DUPLICATE},
      {ingest::IngestVerdict::kUnknownPublisher, v1::INGEST_DECISION_UNKNOWN_PUBLISHER},
  };
  for (const auto& [verdict, decision] : table) {
    outcome.verdict = verdict;
    ToProto(outcome, &response);
    EXPECT_EQ(response.decision(), decision);
  }
}

TEST(IngestRpcTest, DeadLetterPagesRoundTripTheirToken) {
  store::DeadLetterRecord last;
  last.dead_letter_id = "0b7c6d1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e";
  last.created_at = absl::FromUnixMicros(1'700'000'000'123'456);
  v1::ListDeadLettersRequest request;
  request.set_publisher("feed");
  request.set_page_token(DeadLetterPageToken(last));
  absl::StatusOr<DeadLetterPage> page = Validate(request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->publisher, "feed");
  EXPECT_EQ(page->size, 100);
  ASSERT_TRUE(page->after.has_value());
  EXPECT_EQ(page->after->created_at, last.created_at);
  EXPECT_EQ(page->after->dead_letter_id, last.dead_letter_id);
  request.set_page_token("garbage");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
  request.clear_page_token();
  request.set_page_size(1001);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
  request.set_page_size(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
}

TEST(IngestRpcTest, AcceptedItemsPaging) {
  v1::ListAcceptedItemsRequest request;
  EXPECT_EQ(Validate(request)->limit, 100);
  request.set_limit(1000);
  request.set_after_cursor(7);
  EXPECT_EQ(Validate(request)->limit, 1000);
  EXPECT_EQ(Validate(request)->after_cursor, 7);
  request.set_after_cursor(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
  request.set_after_cursor(0);
  request.set_limit(1001);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
}

TEST(IngestRpcTest, MediaIsBoundedAndCarried) {
  v1::EvaluateIngestRequest request = ValidRequest();
  v1::IngestMedia* jpeg = request.add_media();
  jpeg->set_content_type("image/jpeg");
  jpeg->set_data("\xFF\xD8\xFF");
  absl::StatusOr<store::DeliveryRecord> delivery = Validate(request);
  ASSERT_TRUE(delivery.ok()) << delivery.status();
  ASSERT_EQ(delivery->media.size(), 1u);
  EXPECT_EQ(delivery->media[0].content_type, "image/jpeg");
  EXPECT_EQ(delivery->media[0].data, "\xFF\xD8\xFF");

  jpeg->set_content_type("image/gif");
  EXPECT_TRUE(Invalid(request));
  jpeg->set_content_type("image/png");
  jpeg->set_data("");
  EXPECT_TRUE(Invalid(request));
  jpeg->set_data(std::string(kMaxMediaElementBytes + 1, 'x'));
  EXPECT_TRUE(Invalid(request));
  jpeg->set_data(std::string(kMaxMediaElementBytes, 'x'));
  EXPECT_FALSE(Invalid(request));
  jpeg->set_data("x");
  for (int i = 1; i < kMaxMediaElements; ++i) {
    *request.add_media() = *jpeg;
  }
  EXPECT_FALSE(Invalid(request));
  *request.add_media() = request.media(0);
  EXPECT_TRUE(Invalid(request));
}

TEST(IngestRpcTest, AcceptedItemsCarryTheirMediaVerification) {
  store::AcceptedItemRecord record;
  record.media.push_back({"image/jpeg",
                          "valid",
                          {"claimSignature.validated"},
                          "CN=Trusted",
                          "gen/1",
                          "trainedAlgorithmicMedia",
                          true});
  v1::AcceptedItem out;
  ToProto(record, &out);
  ASSERT_EQ(out.media_size(), 1);
  EXPECT_EQ(out.media(0).content_type(), "image/jpeg");
  EXPECT_EQ(out.media(0).verdict(), "valid");
  ASSERT_EQ(out.media(0).status_codes_size(), 1);
  EXPECT_EQ(out.media(0).status_codes(0), "claimSignature.validated");
  EXPECT_EQ(out.media(0).signer_subject(), "CN=Trusted");
  EXPECT_EQ(out.media(0).claim_generator(), "gen/1");
  EXPECT_EQ(out.media(0).digital_source_type(), "trainedAlgorithmicMedia");
  EXPECT_TRUE(out.media(0).synthetic());
}

TEST(IngestRpcTest, DeadLetterIdsAreUuids) {
  EXPECT_TRUE(ValidateDeadLetterId("0b7c6d1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateDeadLetterId("")));
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateDeadLetterId("1; DROP TABLE dead_letters")));
}

}  // namespace
}  // namespace portcullis::verifier::server
