// Differential test against an independent implementation: the reference Standard Webhooks
// library from npm ("standardwebhooks", pinned by tests/differential/standardwebhooks/
// package-lock.json) signs random deliveries that our verifier must accept, and verifies
// deliveries we sign. Installed at test time into the build tree (never into the source tree).
// Without node, npm or the registry the test is skipped loudly; under CI=true it fails.

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
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
#include "tests/support/shared_testdata.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::verifier::ingest {
namespace {

namespace fs = std::filesystem;

constexpr int kDeliveries = 40;

std::string Str(const boost::json::value& value) {
  return std::string(value.as_string().data(), value.as_string().size());
}

std::string Quoted(const fs::path& path) { return absl::StrCat("'", path.string(), "'"); }

// Runs `command` through the shell; its stdout, or nullopt when it exits non-zero.
std::optional<std::string> RunShell(const std::string& command) {
  struct PipeCloser {
    void operator()(FILE* pipe) const {
      if (pipe != nullptr) {
        pclose(pipe);
      }
    }
  };
  FILE* raw = popen(command.c_str(), "r");
  if (raw == nullptr) {
    return std::nullopt;
  }
  std::unique_ptr<FILE, PipeCloser> pipe(raw);
  std::string output;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) {
    output.append(buffer.data(), n);
  }
  const int status = pclose(pipe.release());
  if (status != 0) {
    return std::nullopt;
  }
  return output;
}

class StandardWebhooksDifferentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path source = PORTCULLIS_ORACLE_SOURCE_DIR;
    // One directory per test: ctest may run the tests of this file in parallel.
    work_ = fs::path(PORTCULLIS_ORACLE_WORK_DIR) /
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(work_);
    for (const char* file : {"package.json", "package-lock.json", "oracle.js"}) {
      fs::copy_file(source / file, work_ / file, fs::copy_options::overwrite_existing);
    }
    // npm ci: exactly the locked versions, checked against the lock file's integrity hashes.
    const std::string install =
        absl::StrCat("cd ", Quoted(work_),
                     " && timeout 45 npm ci --no-audit --no-fund --prefer-offline --loglevel=error"
                     " 1>&2");
    if (!RunShell("command -v node >/dev/null && command -v npm >/dev/null").has_value() ||
        !RunShell(install).has_value()) {
      const std::string why =
          "node/npm missing or `npm ci` of standardwebhooks failed (offline?); the differential "
          "check against the reference library did not run";
      if (::portcullis::testing::RunningInCi()) {
        FAIL() << why;
      }
      GTEST_SKIP() << "SKIPPED: " << why;
    }
  }

  std::optional<std::string> Oracle(const std::string& arguments) const {
    return RunShell(
        absl::StrCat("cd ", Quoted(work_), " && timeout 20 node oracle.js ", arguments));
  }

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
  const std::optional<std::string> output = Oracle(absl::StrCat("verify ", Quoted(file)));
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
