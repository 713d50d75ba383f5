#include "verifier-service/src/ingest/standard_webhooks.h"
#include "verifier-service/src/ingest/webhook_vectors.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/json/parse.hpp"
#include "gtest/gtest.h"
#include "tests/support/shared_testdata.h"

namespace portcullis::verifier::ingest {
namespace {

const std::string kVectorsPath =
    std::string(PORTCULLIS_SHARED_TESTDATA_DIR) + "/standard-webhooks/vectors.json";

// Every shared vector (webhook_vectors.h, the runner `portcullis conformance webhooks` uses too);
// prints "N passed, M failed" for them.
TEST(StandardWebhooksSharedVectorsTest, AllVectors) {
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(text, kVectorsPath);
  testing::VectorTally tally;
  const absl::Status run =
      RunWebhookVectors(text, [&](bool ok, const std::string& what) { tally.Check(ok, what); });
  EXPECT_TRUE(run.ok()) << run;
  tally.Report("standard-webhooks");
  EXPECT_EQ(tally.failed(), 0);
  EXPECT_GT(tally.passed(), 0);
}

// A fixed delivery signed with keys made here.
class StandardWebhooksTest : public ::testing::Test {
 protected:
  static constexpr int64_t kTimestamp = 1'700'000'000;
  const std::string old_secret_ = std::string(24, 'o');
  const std::string new_secret_ = std::string(32, 'n');
  const crypto::Ed25519PrivateKey ed_key_ = crypto::Ed25519PrivateKey::Generate();
  const std::string body_ = R"({"id":"item-1","is_synthetic":true})";
  const std::string content_ = SignedContent("msg_1", kTimestamp, body_);

  static VerificationKey Hmac(std::string id, std::string secret) {
    return VerificationKey{std::move(id), SignatureVersion::kV1, std::move(secret)};
  }
  VerificationKey Ed(std::string id) const {
    return VerificationKey{std::move(id), SignatureVersion::kV1a,
                           std::string(ed_key_.PublicKey().raw())};
  }

  absl::StatusOr<VerifiedSignature> Verify(absl::string_view header,
                                           const std::vector<VerificationKey>& keys,
                                           absl::Time now = absl::FromUnixSeconds(kTimestamp),
                                           const SignatureLimits& limits = {}) const {
    return VerifyDelivery({"msg_1", "1700000000", header, body_}, keys, now, limits);
  }

  static SignatureFailure FailureOf(const absl::StatusOr<VerifiedSignature>& result) {
    EXPECT_FALSE(result.ok());
    return SignatureFailureOf(result.status()).value_or(SignatureFailure::kNoKeys);
  }
};

TEST_F(StandardWebhooksTest, TimestampWindowIsInclusiveAtPlusMinus300Seconds) {
  const std::string header = SignV1(old_secret_, content_);
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_)};
  const absl::Time t = absl::FromUnixSeconds(kTimestamp);
  EXPECT_TRUE(Verify(header, keys, t + absl::Seconds(300)).ok());
  EXPECT_TRUE(Verify(header, keys, t + absl::Seconds(300) + absl::Milliseconds(999)).ok());
  EXPECT_TRUE(Verify(header, keys, t - absl::Seconds(300)).ok());
  EXPECT_EQ(FailureOf(Verify(header, keys, t + absl::Seconds(301))),
            SignatureFailure::kTimestampTooOld);
  EXPECT_EQ(FailureOf(Verify(header, keys, t - absl::Seconds(301))),
            SignatureFailure::kTimestampTooNew);
  SignatureLimits narrow;
  narrow.tolerance = absl::Seconds(10);
  EXPECT_EQ(FailureOf(Verify(header, keys, t + absl::Seconds(11), narrow)),
            SignatureFailure::kTimestampTooOld);
  // Stale is reported before the signature is looked at.
  EXPECT_EQ(FailureOf(Verify("v1,AAAA", keys, t + absl::Hours(1))),
            SignatureFailure::kTimestampTooOld);
  const absl::StatusOr<VerifiedSignature> stale = Verify(header, keys, t + absl::Hours(1));
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(IsMalformedSignatureMetadata(SignatureFailure::kTimestampTooOld));
}

TEST_F(StandardWebhooksTest, PreparedEd25519KeysVerifyExactlyAsRawOnes) {
  VerificationKey prepared = Ed("ed");
  PrepareVerificationKey(prepared);
  ASSERT_TRUE(prepared.ed25519.has_value());
  const crypto::Ed25519PrivateKey stranger = crypto::Ed25519PrivateKey::Generate();
  for (const VerificationKey& key : {Ed("ed"), prepared}) {
    const absl::StatusOr<VerifiedSignature> verified = Verify(SignV1a(ed_key_, content_), {key});
    ASSERT_TRUE(verified.ok()) << verified.status();
    EXPECT_EQ(verified->key_id, "ed");
    EXPECT_EQ(FailureOf(Verify(SignV1a(stranger, content_), {key})),
              SignatureFailure::kNoMatchingSignature);
    EXPECT_EQ(FailureOf(Verify(SignV1a(ed_key_, content_ + "x"), {key})),
              SignatureFailure::kNoMatchingSignature);
  }
  // HMAC keys are left as they are.
  VerificationKey hmac = Hmac("old", old_secret_);
  PrepareVerificationKey(hmac);
  EXPECT_FALSE(hmac.ed25519.has_value());
  EXPECT_TRUE(Verify(SignV1(old_secret_, content_), {hmac}).ok());
}

TEST_F(StandardWebhooksTest, AnyActiveKeyVerifiesDuringRotation) {
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_), Hmac("new", new_secret_),
                                             Ed("ed")};
  absl::StatusOr<VerifiedSignature> verified = Verify(SignV1(old_secret_, content_), keys);
  ASSERT_TRUE(verified.ok());
  EXPECT_EQ(verified->key_id, "old");
  verified = Verify(SignV1(new_secret_, content_), keys);
  ASSERT_TRUE(verified.ok());
  EXPECT_EQ(verified->key_id, "new");
  EXPECT_EQ(verified->version, SignatureVersion::kV1);
  verified = Verify(SignV1a(ed_key_, content_), keys);
  ASSERT_TRUE(verified.ok());
  EXPECT_EQ(verified->key_id, "ed");
  EXPECT_EQ(verified->version, SignatureVersion::kV1a);
  // Signed with both during the overlap: either key alone still verifies.
  const std::string both = SignV1(old_secret_, content_) + " " + SignV1(new_secret_, content_);
  EXPECT_TRUE(Verify(both, {Hmac("new", new_secret_)}).ok());
  EXPECT_TRUE(Verify(both, {Hmac("old", old_secret_)}).ok());
  // The old key revoked (no longer in the list): its signature alone no longer verifies.
  EXPECT_EQ(FailureOf(Verify(SignV1(old_secret_, content_), {Hmac("new", new_secret_)})),
            SignatureFailure::kNoMatchingSignature);
  // A v1a signature needs a v1a key.
  EXPECT_EQ(FailureOf(Verify(SignV1a(ed_key_, content_), {Hmac("new", new_secret_)})),
            SignatureFailure::kNoMatchingSignature);
}

TEST_F(StandardWebhooksTest, TamperingIsRefused) {
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_), Ed("ed")};
  for (const std::string& header : {SignV1(old_secret_, content_), SignV1a(ed_key_, content_)}) {
    EXPECT_EQ(FailureOf(VerifyDelivery({"msg_1", "1700000000", header, body_ + " "}, keys,
                                       absl::FromUnixSeconds(kTimestamp))),
              SignatureFailure::kNoMatchingSignature);
    EXPECT_EQ(FailureOf(VerifyDelivery({"msg_2", "1700000000", header, body_}, keys,
                                       absl::FromUnixSeconds(kTimestamp))),
              SignatureFailure::kNoMatchingSignature);
    EXPECT_EQ(FailureOf(VerifyDelivery({"msg_1", "1700000001", header, body_}, keys,
                                       absl::FromUnixSeconds(kTimestamp))),
              SignatureFailure::kNoMatchingSignature);
  }
}

TEST_F(StandardWebhooksTest, ManySignaturesOnlyTheFirstEightAreExamined) {
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_)};
  const std::string wrong = SignV1(new_secret_, content_);
  const std::string right = SignV1(old_secret_, content_);
  std::vector<std::string> tokens(7, wrong);
  tokens.push_back(right);
  EXPECT_TRUE(Verify(absl::StrJoin(tokens, " "), keys).ok());
  tokens.insert(tokens.begin(), "v2,whatever");  // Unknown versions count as examined tokens.
  EXPECT_EQ(FailureOf(Verify(absl::StrJoin(tokens, " "), keys)),
            SignatureFailure::kNoMatchingSignature);
  // Spaces and tabs, repeated, separate tokens.
  EXPECT_TRUE(Verify("  v2,x \t " + right + "   ", keys).ok());
  EXPECT_EQ(ParseSignatureHeader(absl::StrJoin(std::vector<std::string>(20, right), " ")).size(),
            8u);
}

TEST_F(StandardWebhooksTest, OversizedHeaderIsRefused) {
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_)};
  std::string header = SignV1(old_secret_, content_) + " ";
  header.append(2048, 'x');
  const absl::StatusOr<VerifiedSignature> result = Verify(header, keys);
  EXPECT_EQ(FailureOf(result), SignatureFailure::kHeaderTooLarge);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsMalformedSignatureMetadata(SignatureFailure::kHeaderTooLarge));
}

TEST_F(StandardWebhooksTest, MalformedTokensAreReportedUnlessAnotherVerifies) {
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_), Ed("ed")};
  const std::string right = SignV1(old_secret_, content_);
  for (const std::string& header : std::vector<std::string>{
           "v1", "v1,", "v1,not base64!", "v1,AAAA" /* 3 bytes */, "v1a,AAAA",
           right.substr(0, right.size() - 1) /* unpadded */, "v1;" + right.substr(3)}) {
    const absl::StatusOr<VerifiedSignature> result = Verify(header, keys);
    EXPECT_EQ(FailureOf(result), SignatureFailure::kMalformedSignature) << header;
    EXPECT_TRUE(IsMalformedSignatureMetadata(*SignatureFailureOf(result.status())));
    EXPECT_TRUE(Verify(header + " " + right, keys).ok()) << header;
  }
  // Only unknown versions: nothing to verify, nothing malformed.
  EXPECT_EQ(FailureOf(Verify("v2,abc v0,def", keys)), SignatureFailure::kNoMatchingSignature);
}

TEST_F(StandardWebhooksTest, IdAndTimestampMustBeWellFormed) {
  const std::vector<VerificationKey> keys = {Hmac("old", old_secret_)};
  const std::string header = SignV1(old_secret_, content_);
  const absl::Time now = absl::FromUnixSeconds(kTimestamp);
  EXPECT_EQ(FailureOf(VerifyDelivery({"", "1700000000", header, body_}, keys, now)),
            SignatureFailure::kMissingId);
  EXPECT_EQ(FailureOf(VerifyDelivery({"a\nb", "1700000000", header, body_}, keys, now)),
            SignatureFailure::kMalformedId);
  EXPECT_EQ(
      FailureOf(VerifyDelivery({std::string(257, 'i'), "1700000000", header, body_}, keys, now)),
      SignatureFailure::kMalformedId);
  EXPECT_EQ(FailureOf(VerifyDelivery({"msg_1", "", header, body_}, keys, now)),
            SignatureFailure::kMissingTimestamp);
  for (const char* timestamp : {"+1700000000", "-1", "1700000000.0", "17e8", " 1700000000", "0x65",
                                "99999999999999999999", "9223372036854775808"}) {
    EXPECT_EQ(FailureOf(VerifyDelivery({"msg_1", timestamp, header, body_}, keys, now)),
              SignatureFailure::kMalformedTimestamp)
        << timestamp;
  }
  // A far-future but well-formed timestamp is just too new, without overflow.
  EXPECT_EQ(FailureOf(VerifyDelivery({"msg_1", "9223372036854775807", header, body_}, keys,
                                     absl::FromUnixSeconds(-5'000'000'000))),
            SignatureFailure::kTimestampTooNew);
  for (SignatureFailure failure :
       {SignatureFailure::kMissingId, SignatureFailure::kMalformedId,
        SignatureFailure::kMissingTimestamp, SignatureFailure::kMalformedTimestamp}) {
    EXPECT_TRUE(IsMalformedSignatureMetadata(failure));
  }
}

TEST_F(StandardWebhooksTest, UnsignedAndKeylessDeliveries) {
  // An unsigned delivery is "no signature", even without id and timestamp.
  const absl::StatusOr<VerifiedSignature> unsigned_delivery =
      VerifyDelivery({"", "", "", body_}, {Hmac("old", old_secret_)}, absl::Now());
  EXPECT_EQ(FailureOf(unsigned_delivery), SignatureFailure::kNoSignature);
  EXPECT_EQ(unsigned_delivery.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(IsMalformedSignatureMetadata(SignatureFailure::kNoSignature));
  EXPECT_EQ(FailureOf(Verify(" \t ", {Hmac("old", old_secret_)})), SignatureFailure::kNoSignature);

  const absl::StatusOr<VerifiedSignature> keyless = Verify(SignV1(old_secret_, content_), {});
  EXPECT_EQ(FailureOf(keyless), SignatureFailure::kNoKeys);
  EXPECT_EQ(keyless.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(StandardWebhooksKeyTest, KeysAreParsedStrictly) {
  const std::string secret24 = absl::Base64Escape(std::string(24, 's'));
  EXPECT_TRUE(ParseVerificationKey("a", "whsec_" + secret24).ok());
  EXPECT_TRUE(ParseVerificationKey("a", secret24).ok());
  // Too short, too long, empty, not base64.
  EXPECT_FALSE(ParseVerificationKey("a", "whsec_" + absl::Base64Escape(std::string(23, 's'))).ok());
  EXPECT_FALSE(ParseVerificationKey("a", "whsec_" + absl::Base64Escape(std::string(65, 's'))).ok());
  EXPECT_TRUE(ParseVerificationKey("a", "whsec_" + absl::Base64Escape(std::string(64, 's'))).ok());
  EXPECT_FALSE(ParseVerificationKey("a", "").ok());
  EXPECT_FALSE(ParseVerificationKey("a", "whpk_").ok());
  EXPECT_FALSE(ParseVerificationKey("a", "whsec_%%%%").ok());
  // Ed25519 public keys are exactly 32 bytes.
  const crypto::Ed25519PrivateKey ed = crypto::Ed25519PrivateKey::Generate();
  const absl::StatusOr<VerificationKey> public_key =
      ParseVerificationKey("ed", SerializePublicKey(ed.PublicKey()));
  ASSERT_TRUE(public_key.ok());
  EXPECT_EQ(public_key->version, SignatureVersion::kV1a);
  EXPECT_EQ(public_key->material, ed.PublicKey().raw());
  EXPECT_FALSE(ParseVerificationKey("a", "whpk_" + secret24).ok());
  // A signing key is not a verification key, and the message does not echo it.
  const absl::StatusOr<VerificationKey> signing =
      ParseVerificationKey("a", SerializeSigningKey(ed));
  ASSERT_FALSE(signing.ok());
  EXPECT_EQ(signing.status().message().find(SerializeSigningKey(ed).substr(5)), std::string::npos);
  // whsk_ round trip.
  const absl::StatusOr<crypto::Ed25519PrivateKey> parsed = ParseSigningKey(SerializeSigningKey(ed));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->seed(), ed.seed());
  EXPECT_FALSE(ParseSigningKey("whpk_" + secret24).ok());
}

TEST(StandardWebhooksKeyTest, FailureNamesAreStable) {
  EXPECT_EQ(SignatureFailureName(SignatureFailure::kNoSignature), "no_signature");
  EXPECT_EQ(SignatureFailureName(SignatureFailure::kNoMatchingSignature), "no_matching_signature");
  EXPECT_EQ(SignatureVersionName(SignatureVersion::kV1a), "v1a");
  EXPECT_FALSE(SignatureFailureOf(absl::UnauthenticatedError("x")).has_value());
}

}  // namespace
}  // namespace portcullis::verifier::ingest
