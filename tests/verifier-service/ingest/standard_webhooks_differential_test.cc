// Differential test against an independent implementation: the reference Standard Webhooks
// library from npm ("standardwebhooks", pinned by tests/differential/standardwebhooks/
// package-lock.json) signs random deliveries that our verifier must accept, and verifies
// deliveries we sign. Installed at test time into the build tree (never into the source tree).
// Without node, npm or the registry the test is skipped loudly; under CI=true it fails.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "boost/json/parse.hpp"
#include "boost/json/serialize.hpp"
#include "common/crypto/random.h"
#include "gtest/gtest.h"
#include "tests/support/npm_oracle.h"
#include "tests/support/shared_testdata.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::verifier::ingest {
namespace {

namespace fs = std::filesystem;

constexpr int kDeliveries = 40;

std::string Str(const boost::json::value& value) {
  return std::string(value.as_string().data(), value.as_string().size());
}

class StandardWebhooksDifferentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test: ctest may run the tests of this file in parallel.
    PORTCULLIS_INSTALL_NPM_ORACLE_OR_SKIP(
        oracle_, PORTCULLIS_ORACLE_SOURCE_DIR,
        fs::path(PORTCULLIS_ORACLE_WORK_DIR) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name(),
        absl::Seconds(45), "the reference library");
    work_ = oracle_->work_dir();
  }

  std::optional<std::string> Oracle(const std::string& arguments) const {
    return oracle_->Run(arguments);
  }

  std::optional<testing::NpmOracle> oracle_;
  fs::path work_;
};

TEST_F(StandardWebhooksDifferentialTest, WeAcceptWhatTheReferenceSigns) {
  const std::optional<std::string> output = Oracle(absl::StrCat("sign ", kDeliveries));
  ASSERT_TRUE(output.has_value()) << "node oracle.js sign failed";
  const boost::json::array deliveries = boost::json::parse(*output).as_array();
  ASSERT_EQ(deliveries.size(), static_cast<size_t>(kDeliveries));

  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> skew(-300, 300);
  int passed = 0;
  int failed = 0;
  for (const boost::json::value& delivery : deliveries) {
    const std::string secret = Str(delivery.at("secret"));
    const std::string msg_id = Str(delivery.at("msg_id"));
    const int64_t timestamp = delivery.at("timestamp").as_int64();
    const std::string timestamp_text = absl::StrCat(timestamp);
    std::string payload;
    ASSERT_TRUE(absl::Base64Unescape(Str(delivery.at("payload_base64")), &payload));
    const std::string signature = Str(delivery.at("signature"));
    const absl::StatusOr<VerificationKey> key = ParseVerificationKey("oracle", secret);
    ASSERT_TRUE(key.ok()) << key.status();
    const absl::Time now = absl::FromUnixSeconds(timestamp + skew(random));

    // Accepted as signed, and our own signature is the same token.
    const absl::StatusOr<VerifiedSignature> verified =
        VerifyDelivery({msg_id, timestamp_text, signature, payload}, {*key}, now);
    const bool same_token =
        SignV1(key->material, SignedContent(msg_id, timestamp, payload)) == signature;
    // Refused once tampered: one payload byte, the id, the timestamp.
    std::string tampered_payload = payload;
    if (tampered_payload.empty()) {
      tampered_payload = " ";
    } else {
      tampered_payload[random() % tampered_payload.size()] ^= 0x01;
    }
    const absl::StatusOr<VerifiedSignature> tampered_body =
        VerifyDelivery({msg_id, timestamp_text, signature, tampered_payload}, {*key}, now);
    const absl::StatusOr<VerifiedSignature> tampered_id =
        VerifyDelivery({msg_id + "x", timestamp_text, signature, payload}, {*key}, now);
    const absl::StatusOr<VerifiedSignature> tampered_timestamp =
        VerifyDelivery({msg_id, absl::StrCat(timestamp + 1), signature, payload}, {*key}, now);
    const bool ok =
        verified.ok() && same_token &&
        SignatureFailureOf(tampered_body.status()) == SignatureFailure::kNoMatchingSignature &&
        !tampered_id.ok() && !tampered_timestamp.ok();
    if (ok) {
      ++passed;
    } else {
      ++failed;
      ADD_FAILURE() << "delivery " << msg_id << " at " << timestamp << ": "
                    << (verified.ok() ? "tampered copy accepted or token differs"
                                      : verified.status().ToString());
    }
  }
  std::cout << "standardwebhooks differential (reference signs, we verify): " << passed
            << " passed, " << failed << " failed\n";
  EXPECT_EQ(failed, 0);
}

TEST_F(StandardWebhooksDifferentialTest, TheReferenceAcceptsWhatWeSign) {
  // The reference verifies against its own clock, so these are signed "now".
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  boost::json::array deliveries;
  std::vector<bool> expected;
  for (int i = 0; i < 10; ++i) {
    const std::string secret_bytes = absl::HexStringToBytes(crypto::RandomHex(24 + 4 * i));
    const std::string secret = absl::StrCat("whsec_", absl::Base64Escape(secret_bytes));
    const std::string msg_id = absl::StrCat("msg_", crypto::RandomHex(8));
    const std::string payload =
        absl::StrCat("{\"id\":\"", crypto::RandomHex(6), "\",\"content\":\"caf\xC3\xA9 ", i, "\"}");
    const absl::StatusOr<VerificationKey> key = ParseVerificationKey("us", secret);
    ASSERT_TRUE(key.ok()) << key.status();
    const bool tamper = i % 5 == 4;
    std::string signature = SignV1(key->material, SignedContent(msg_id, now, payload));
    if (tamper) {
      signature = SignV1(key->material, SignedContent(msg_id, now, payload + " "));
    }
    boost::json::object delivery;
    delivery["secret"] = secret;
    delivery["msg_id"] = msg_id;
    delivery["timestamp"] = now;
    delivery["payload_base64"] = absl::Base64Escape(payload);
    delivery["signature"] = signature;
    deliveries.push_back(std::move(delivery));
    expected.push_back(!tamper);
  }
  const fs::path file = work_ / "ours.json";
  std::ofstream(file) << boost::json::serialize(deliveries);
  const std::optional<std::string> output =
      Oracle(absl::StrCat("verify ", testing::ShellQuoted(file)));
  ASSERT_TRUE(output.has_value()) << "node oracle.js verify failed";
  const boost::json::array verdicts = boost::json::parse(*output).as_array();
  ASSERT_EQ(verdicts.size(), expected.size());
  int passed = 0;
  int failed = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (verdicts[i].as_bool() == expected[i]) {
      ++passed;
    } else {
      ++failed;
      ADD_FAILURE() << "delivery " << i << ": reference said " << verdicts[i].as_bool();
    }
  }
  std::cout << "standardwebhooks differential (we sign, reference verifies): " << passed
            << " passed, " << failed << " failed\n";
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace portcullis::verifier::ingest
