#include "verifier-service/src/delivery/webhook_signer.h"

#include <boost/json.hpp>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/shared_testdata.h"

namespace portcullis::verifier::delivery {
namespace {

namespace json = boost::json;

const char kVectors[] = PORTCULLIS_SHARED_TESTDATA_DIR "/standard-webhooks/vectors.json";

std::string Text(const json::value& value) { return std::string(value.as_string()); }

// Every published v1 signing vector (Standard Webhooks and svix), signed as a delivery is.
TEST(VerifierDeliveryWebhookSignerTest, SignsThePublishedV1Vectors) {
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(text, kVectors);
  const json::value vectors = json::parse(text);
  testing::VectorTally tally;
  for (const json::value& vector : vectors.at("sign_vectors").as_array()) {
    absl::StatusOr<SigningKey> key = ParseSigningKey(Text(vector.at("secret")), "");
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_EQ(key->version, "v1");
    absl::StatusOr<std::string> signature =
        Sign(*key, Text(vector.at("msg_id")), vector.at("timestamp").to_number<int64_t>(),
             Text(vector.at("payload")));
    ASSERT_TRUE(signature.ok()) << signature.status();
    tally.Check(*signature == Text(vector.at("expected_signature")),
                Text(vector.at("id")) + ": " + *signature);
  }
  tally.Report("standard-webhooks sign_vectors (deliveries)");
  EXPECT_EQ(tally.failed(), 0);
  EXPECT_GE(tally.passed(), 2);
}

// The derived v1a vector (RFC 8032 test key 1 over sw-sign-1's content), and its public key.
TEST(VerifierDeliveryWebhookSignerTest, SignsTheDerivedV1aVectorAndPublishesItsPublicKey) {
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(text, kVectors);
  const json::value vectors = json::parse(text);
  const json::value& v1a = vectors.at("derived_v1a_vector");
  absl::StatusOr<SigningKey> key = ParseSigningKey("", Text(v1a.at("whsk_seed_form")));
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->version, "v1a");
  absl::StatusOr<std::string> signature =
      Sign(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, R"({"test": 2432232314})");
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_EQ(*signature, Text(v1a.at("expected_signature")));
  EXPECT_EQ(PublicKeyOf(*key), Text(v1a.at("whpk")));
}

TEST(VerifierDeliveryWebhookSignerTest, RefusesMissingDoubledAndMalformedKeysWithoutEchoingThem) {
  const std::string secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const std::string seed = "whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
  for (const auto& [given_secret, given_key] : std::vector<std::pair<std::string, std::string>>{
           {"", ""},
           {secret, seed},
           {"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ""},  // bare base64: the whsec_ prefix is asked
           {"whsec_c2hvcnQ=", ""},                    // 5 bytes
           {"whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", ""},
           {"", "whsk_c2hvcnQ="},
           {"", secret}}) {
    const absl::StatusOr<SigningKey> key = ParseSigningKey(given_secret, given_key);
    EXPECT_TRUE(absl::IsInvalidArgument(key.status())) << given_secret << " " << given_key;
    EXPECT_EQ(key.status().message().find("MfKQ9r8G"), absl::string_view::npos);
    EXPECT_EQ(key.status().message().find("nWGxne"), absl::string_view::npos);
  }
  EXPECT_EQ(PublicKeyOf({"v1", "0123456789abcdef01234567"}), "");
  EXPECT_TRUE(absl::IsInternal(Sign({"v2", "x"}, "msg_1", 1, "{}").status()));
}

}  // namespace
}  // namespace portcullis::verifier::delivery
