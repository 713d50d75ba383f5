#include "verifier-service/src/server/publisher_rpcs.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "boost/json/parse.hpp"
#include "common/crypto/ed25519.h"
#include "gtest/gtest.h"
#include "tests/support/shared_testdata.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

TEST(PublisherAdminRpcTest, KeysAreWhpkEd25519OrWhsecOfAtLeast24Bytes) {
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  absl::StatusOr<ParsedPublisherKey> ed =
      ParsePublisherKey(ingest::SerializePublicKey(key.PublicKey()));
  ASSERT_TRUE(ed.ok()) << ed.status();
  EXPECT_EQ(ed->algorithm, "ed25519");
  EXPECT_EQ(ed->material, std::string(key.PublicKey().raw()));

  absl::StatusOr<ParsedPublisherKey> hmac =
      ParsePublisherKey("whsec_" + absl::Base64Escape(std::string(24, 's')));
  ASSERT_TRUE(hmac.ok()) << hmac.status();
  EXPECT_EQ(hmac->algorithm, "hmac-sha256");
  EXPECT_EQ(hmac->material, std::string(24, 's'));

  const std::string refused[] = {
      "",
      "whsec_",
      "whsec_" + absl::Base64Escape(std::string(23, 's')),  // too short
      "whsec_" + absl::Base64Escape(std::string(65, 's')),  // too long
      absl::Base64Escape(std::string(32, 's')),             // no prefix
      "whpk_" + absl::Base64Escape(std::string(31, 'k')),   // not 32 bytes
      "whpk_AAAA",
      ingest::SerializeSigningKey(key),                     // a private key
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n",           // not strict base64
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS",              // unpadded
      std::string(300, 'w'),
  };
  for (const std::string& serialized : refused) {
    absl::StatusOr<ParsedPublisherKey> parsed = ParsePublisherKey(serialized);
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << serialized;
    if (serialized.size() > 10) {
      EXPECT_FALSE(absl::StrContains(parsed.status().message(), serialized.substr(6)))
          << "the error never repeats the key";
    }
  }
}

// The shared secret-parsing vectors, as AddPublisherKey reads them (prefix required, strict
// base64: the unpadded forms some libraries accept are refused).
TEST(PublisherAdminRpcTest, SharedSecretParsingVectors) {
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(
      text, std::string(PORTCULLIS_SHARED_TESTDATA_DIR) + "/standard-webhooks/vectors.json");
  const boost::json::value vectors = boost::json::parse(text);
  testing::VectorTally tally;
  for (const boost::json::value& vector : vectors.at("secret_parsing_vectors").as_array()) {
    const std::string secret(vector.at("secret").as_string());
    const std::string expect(vector.at("expect").as_string());
    absl::StatusOr<ParsedPublisherKey> parsed = ParsePublisherKey(secret);
    if (absl::StartsWith(expect, "accept")) {
      // Accepted bare by the libraries; AddPublisherKey wants the whsec_ prefix for it.
      absl::StatusOr<ParsedPublisherKey> prefixed = ParsePublisherKey("whsec_" + secret);
      const std::string want =
          absl::HexStringToBytes(std::string(vector.at("key_bytes_hex").as_string()));
      tally.Check(!parsed.ok() && prefixed.ok() && prefixed->material == want,
                  "accept with prefix: " + secret);
    } else {
      const std::string prefixed =
          absl::StartsWith(secret, "whsec_") ? secret : "whsec_" + secret;
      tally.Check(!parsed.ok() && !ParsePublisherKey(prefixed).ok(), "refuse: " + secret);
    }
  }
  tally.Report("standard-webhooks secret parsing through AddPublisherKey");
  EXPECT_EQ(tally.failed(), 0);
}

TEST(PublisherAdminRpcTest, AddPublisherRules) {
  v1::AddPublisherRequest request;
  request.mutable_publisher()->set_name("feed.example");
  request.mutable_publisher()->set_verified(true);
  request.mutable_publisher()->set_retention_seconds(3600);
  absl::StatusOr<store::PublisherSettings> settings = Validate(request);
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->name, "feed.example");
  EXPECT_TRUE(settings->verified);
  EXPECT_FALSE(settings->require_signature);
  EXPECT_EQ(settings->retention_seconds, 3600);
  request.mutable_publisher()->set_retention_seconds(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
  request.mutable_publisher()->set_retention_seconds(0);
  request.mutable_publisher()->set_name("");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
}

TEST(PublisherAdminRpcTest, KeepDropsIsASettingOfAddAndUpdate) {
  v1::AddPublisherRequest add;
  add.mutable_publisher()->set_name("feed.example");
  add.mutable_publisher()->set_keep_drops_seconds(7 * 24 * 3600);
  absl::StatusOr<store::PublisherSettings> settings = Validate(add);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->keep_drops_seconds, 7 * 24 * 3600);
  add.mutable_publisher()->set_keep_drops_seconds(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(add).status()));

  v1::UpdatePublisherRequest update;
  update.set_name("feed.example");
  // Nothing to update.
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(update).status()));
  update.set_keep_drops_seconds(0);  // Set to zero: off.
  absl::StatusOr<PublisherUpdate> parsed = Validate(update);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->change.keep_drops_seconds, 0);
  EXPECT_FALSE(parsed->change.require_c2pa_for_media.has_value());
  EXPECT_FALSE(parsed->change.c2pa_trust.has_value());
  update.set_keep_drops_seconds(int64_t{11} * 366 * 24 * 3600);
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(update).status()));
  update.set_keep_drops_seconds(60);
  update.set_name("bad name");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(update).status()));

  store::PublisherRecord record;
  record.settings.name = "feed.example";
  record.settings.keep_drops_seconds = 3600;
  v1::Publisher out;
  ToProto(record, false, &out);
  EXPECT_EQ(out.keep_drops_seconds(), 3600);
}

TEST(PublisherAdminRpcTest, UpdatePublisherC2paSettings) {
  v1::UpdatePublisherRequest update;
  update.set_name("feed.example");
  update.set_require_c2pa_for_media(false);
  absl::StatusOr<PublisherUpdate> parsed = Validate(update);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->change.require_c2pa_for_media, std::optional<bool>(false));
  EXPECT_FALSE(parsed->change.keep_drops_seconds.has_value());
  // Empty clears the list; anything else must be PEM certificates, within the cap.
  update.set_c2pa_trust("");
  parsed = Validate(update);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->change.c2pa_trust, std::optional<std::string>(""));
  update.set_c2pa_trust("not a certificate");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(update).status()));
  update.set_c2pa_trust(std::string(kMaxC2paTrustBytes + 1, 'a'));
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(update).status()));

  // AddPublisher takes both, under the same rules.
  v1::AddPublisherRequest add;
  add.mutable_publisher()->set_name("feed.example");
  add.mutable_publisher()->set_require_c2pa_for_media(true);
  absl::StatusOr<store::PublisherSettings> settings = Validate(add);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(settings->require_c2pa_for_media);
  EXPECT_EQ(settings->c2pa_trust, "");
  add.mutable_publisher()->set_c2pa_trust("not a certificate");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(add).status()));

  store::PublisherRecord record;
  record.settings.require_c2pa_for_media = true;
  record.settings.c2pa_trust = "-----BEGIN CERTIFICATE-----";
  v1::Publisher out;
  ToProto(record, false, &out);
  EXPECT_TRUE(out.require_c2pa_for_media());
  EXPECT_EQ(out.c2pa_trust(), "-----BEGIN CERTIFICATE-----");
}

TEST(PublisherAdminRpcTest, PublisherPagesRoundTripTheirToken) {
  v1::ListPublishersRequest request;
  request.set_page_token(PublisherPageToken("feed.example"));
  absl::StatusOr<PublisherPage> page = Validate(request);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->after, "feed.example");
  request.set_page_token("x");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request).status()));
}

TEST(PublisherAdminRpcTest, KeysAreReportedWithoutSecrets) {
  store::PublisherKeyRecord hmac{"id-1", store::kHmacSha256Algorithm, std::string(32, 's'),
                                 "abcdef01", absl::FromUnixSeconds(10), absl::FromUnixSeconds(20)};
  v1::PublisherKey out;
  ToProto(hmac, &out);
  EXPECT_EQ(out.algorithm(), "hmac-sha256");
  EXPECT_EQ(out.public_key(), "");
  EXPECT_TRUE(out.revoked());
  EXPECT_EQ(out.revoked_at().seconds(), 20);
  EXPECT_EQ(out.DebugString().find(std::string(32, 's')), std::string::npos);
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  store::PublisherKeyRecord ed{"id-2", store::kEd25519Algorithm,
                               std::string(key.PublicKey().raw()), "abcdef02",
                               absl::FromUnixSeconds(10), std::nullopt};
  ToProto(ed, &out);
  EXPECT_EQ(out.public_key(), ingest::SerializePublicKey(key.PublicKey()));
  EXPECT_FALSE(out.revoked());
}

TEST(PublisherAdminRpcTest, RevokeNeedsAUuid) {
  v1::RevokePublisherKeyRequest request;
  request.set_publisher("feed");
  request.set_key_id("0b7c6d1e-2f3a-4b5c-8d9e-0f1a2b3c4d5e");
  EXPECT_TRUE(Validate(request).ok());
  request.set_key_id("k1");
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(request)));
}

}  // namespace
}  // namespace portcullis::verifier::server
