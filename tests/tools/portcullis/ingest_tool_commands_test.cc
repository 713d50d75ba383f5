#include "tools/portcullis/src/ingest_tool_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/portcullis/fake_verifier.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;
namespace webhooks = verifier::ingest;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr char kBody[] = "{\"id\":\"item-1\",\"is_synthetic\":true}\n";

class IngestToolCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("portcullis-ingest-tool-", ::getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    body_path_ = Write("item.json", kBody);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& contents) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
  }

  int Run(const std::vector<std::string>& args, CliOptions options = {}) {
    out_.str("");
    err_.str("");
    options.verifier_target = "127.0.0.1:1";
    options.token = kTestToken;
    options.timeout = absl::Seconds(1);
    return cli::Run(args, options, out_, err_);
  }

  // The three header lines of `sign` output, by name.
  std::map<std::string, std::string> Headers() const {
    std::map<std::string, std::string> headers;
    for (absl::string_view line : absl::StrSplit(out_.str(), '\n', absl::SkipEmpty())) {
      const size_t colon = line.find(": ");
      headers[std::string(line.substr(0, colon))] = std::string(line.substr(colon + 2));
    }
    return headers;
  }

  // Whether the printed headers verify for kBody under `key` at `now`.
  absl::Status VerifyPrinted(const webhooks::VerificationKey& key, absl::Time now) const {
    std::map<std::string, std::string> headers = Headers();
    return webhooks::VerifyDelivery({headers["webhook-id"], headers["webhook-timestamp"],
                                     headers["X-Provenance-Signature"], kBody},
                                    {key}, now)
        .status();
  }

  fs::path dir_;
  std::string body_path_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(IngestToolCommandsTest, KeygenPrintsAMatchingPair) {
  ASSERT_EQ(Run({"keygen"}), kExitOk);
  const boost::json::value pair = boost::json::parse(out_.str());
  const std::string signing(pair.at("signing_key").as_string());
  const std::string public_key(pair.at("public_key").as_string());
  EXPECT_TRUE(absl::StartsWith(signing, "whsk_")) << signing;
  EXPECT_TRUE(absl::StartsWith(public_key, "whpk_")) << public_key;
  absl::StatusOr<crypto::Ed25519PrivateKey> parsed = webhooks::ParseSigningKey(signing);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(webhooks::SerializePublicKey(parsed->PublicKey()), public_key);
  // Fresh every time.
  ASSERT_EQ(Run({"keygen"}), kExitOk);
  EXPECT_NE(std::string(boost::json::parse(out_.str()).at("signing_key").as_string()), signing);
}

TEST_F(IngestToolCommandsTest, SignWithAnEd25519KeyVerifiesUnderItsPublicKey) {
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  CliOptions options;
  options.key = webhooks::SerializeSigningKey(key);
  options.message_id = "msg_fixed";
  options.timestamp = "1700000000";
  ASSERT_EQ(Run({"sign", body_path_}, options), kExitOk) << err_.str();
  EXPECT_EQ(Headers()["webhook-id"], "msg_fixed");
  EXPECT_EQ(Headers()["webhook-timestamp"], "1700000000");
  EXPECT_TRUE(absl::StartsWith(Headers()["X-Provenance-Signature"], "v1a,"));
  const absl::StatusOr<webhooks::VerificationKey> public_key =
      webhooks::ParseVerificationKey("p", webhooks::SerializePublicKey(key.PublicKey()));
  ASSERT_TRUE(public_key.ok());
  EXPECT_TRUE(VerifyPrinted(*public_key, absl::FromUnixSeconds(1700000000)).ok());
  // Another key does not verify it.
  const absl::StatusOr<webhooks::VerificationKey> other = webhooks::ParseVerificationKey(
      "o", webhooks::SerializePublicKey(crypto::Ed25519PrivateKey::Generate().PublicKey()));
  EXPECT_FALSE(VerifyPrinted(*other, absl::FromUnixSeconds(1700000000)).ok());
}

TEST_F(IngestToolCommandsTest, SignWithAnHmacSecretIsV1AndDefaultsToNowAndARandomId) {
  const std::string secret = absl::StrCat("whsec_", absl::Base64Escape(std::string(32, 's')));
  CliOptions options;
  options.key = secret;
  const absl::Time before = absl::Now();
  ASSERT_EQ(Run({"sign", body_path_}, options), kExitOk) << err_.str();
  EXPECT_TRUE(absl::StartsWith(Headers()["X-Provenance-Signature"], "v1,"));
  EXPECT_THAT(Headers()["webhook-id"], MatchesRegex("msg_[0-9a-f]{24}"));
  int64_t timestamp = 0;
  ASSERT_TRUE(absl::SimpleAtoi(Headers()["webhook-timestamp"], &timestamp));
  EXPECT_GE(timestamp, absl::ToUnixSeconds(before));
  EXPECT_LE(timestamp, absl::ToUnixSeconds(absl::Now()));
  const absl::StatusOr<webhooks::VerificationKey> key =
      webhooks::ParseVerificationKey("s", secret);
  ASSERT_TRUE(key.ok());
  EXPECT_TRUE(VerifyPrinted(*key, absl::Now()).ok());
  const std::string first_id = Headers()["webhook-id"];
  ASSERT_EQ(Run({"sign", body_path_}, options), kExitOk);
  EXPECT_NE(Headers()["webhook-id"], first_id);
}

TEST_F(IngestToolCommandsTest, SignReadsTheKeyFromAFile) {
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  CliOptions options;
  options.key = "@" + Write("key", webhooks::SerializeSigningKey(key) + "\n");
  ASSERT_EQ(Run({"sign", body_path_}, options), kExitOk) << err_.str();
  const absl::StatusOr<webhooks::VerificationKey> public_key =
      webhooks::ParseVerificationKey("p", webhooks::SerializePublicKey(key.PublicKey()));
  EXPECT_TRUE(VerifyPrinted(*public_key, absl::Now()).ok());
}

TEST_F(IngestToolCommandsTest, SignRefusesWhatCannotSignWithoutPrintingTheKey) {
  const crypto::Ed25519PrivateKey key = crypto::Ed25519PrivateKey::Generate();
  const std::string public_key = webhooks::SerializePublicKey(key.PublicKey());
  for (const std::string& bad : {public_key, std::string("whsk_short"),
                                 std::string("whsec_c2hvcnQ="), std::string("plain")}) {
    CliOptions options;
    options.key = bad;
    EXPECT_EQ(Run({"sign", body_path_}, options), kExitUsage) << bad;
    EXPECT_TRUE(out_.str().empty());
    EXPECT_THAT(err_.str(), ::testing::Not(HasSubstr(bad))) << err_.str();
  }
  CliOptions options;
  EXPECT_EQ(Run({"sign", body_path_}, options), kExitUsage);  // No key.
  options.key = webhooks::SerializeSigningKey(key);
  for (const char* timestamp : {"-1", "12a", "99999999999999999999", " 1"}) {
    options.timestamp = timestamp;
    EXPECT_EQ(Run({"sign", body_path_}, options), kExitUsage) << timestamp;
  }
  options.timestamp = "";
  EXPECT_EQ(Run({"sign", (dir_ / "missing.json").string()}, options), kExitFailed);
}

TEST_F(IngestToolCommandsTest, FormatSignedHeadersIsCurlHeaderFileSyntax) {
  EXPECT_EQ(FormatSignedHeaders({.msg_id = "msg_1", .timestamp = 5, .signature = "v1,AA=="}),
            "webhook-id: msg_1\nwebhook-timestamp: 5\nX-Provenance-Signature: v1,AA==\n");
}

TEST_F(IngestToolCommandsTest, ConformanceRunnersCountFailuresAndSkipMissingData) {
  // One JCS case whose expected output is wrong: 1 failed, exit 1.
  const std::string jcs = Write("jcs.json", R"({
    "canonicalization_files": [{"name": "x", "input_base64": "eyJiIjoxLCJhIjoyfQ==",
      "expected_output_hex": "7b2261223a322c2262223a317d",
      "expected_output_sha256_hex": "0000"}],
    "number_serialization": {}, "errata": []})");
  EXPECT_EQ(Run({"conformance", "jcs", jcs}), kExitFailed);
  EXPECT_THAT(out_.str(), HasSubstr("1 passed, 1 failed"));
  EXPECT_THAT(out_.str(), HasSubstr("FAIL: x: content hash"));

  EXPECT_EQ(Run({"conformance", "webhooks", jcs}), kExitFailed);  // Not that format.
  EXPECT_THAT(err_.str(), HasSubstr("not a Standard Webhooks vectors file"));

  const std::string missing = (dir_ / "absent.json").string();
  EXPECT_EQ(Run({"conformance", "jcs", missing}), kExitFailed);
  if (const char* ci = std::getenv("CI"); ci == nullptr || std::string(ci) != "true") {
    EXPECT_EQ(Run({"conformance", "jcs-if-present", missing}), kExitSkipped);
    EXPECT_EQ(Run({"conformance", "webhooks-if-present", missing}), kExitSkipped);
    EXPECT_THAT(err_.str(), HasSubstr("SKIPPED"));
  }
}

}  // namespace
}  // namespace portcullis::cli
