#include "tools/portcullis/src/c2pa_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "boost/json/parse.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class C2paCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("c2pa_commands_test_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    now_ = absl::Now();
    signer_ =
        testing::MakeC2paTestCredential("CLI Signer", now_ - absl::Hours(1), now_ + absl::Hours(1));
    testing::C2paTestManifest manifest;
    manifest.digital_source_type = "trainedAlgorithmicMedia";
    Write("signed.jpg",
          testing::SignC2paTestAsset(testing::PlainTestJpeg(), verifier::c2pa::MediaType::kJpeg,
                                     signer_, manifest));
    Write("plain.png", testing::PlainTestPng());
    Write("trust.pem", signer_.certificate_pem);
    Write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  absl::Time now_;
  testing::C2paTestCredential signer_;
};

TEST_F(C2paCommandsTest, PrintsAValidTrustedManifestAndExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(VerifyC2paFile(Path("signed.jpg"), Path("trust.pem"), now_, out, err), kExitOk)
      << err.str();
  const boost::json::object json = boost::json::parse(out.str()).as_object();
  EXPECT_EQ(json.at("verdict").as_string(), "valid");
  EXPECT_EQ(json.at("media_type").as_string(), "image/jpeg");
  EXPECT_EQ(json.at("signer_subject").as_string(), "CN=CLI Signer");
  EXPECT_EQ(json.at("digital_source_type").as_string(), "trainedAlgorithmicMedia");
  EXPECT_EQ(json.at("statuses").as_array().size(), 5u);
}

TEST_F(C2paCommandsTest, WithoutTrustAnchorsTheSignerIsUntrustedAndTheExitIsOne) {
  std::ostringstream out, err;
  EXPECT_EQ(VerifyC2paFile(Path("signed.jpg"), "", now_, out, err), kExitFailed);
  const boost::json::object json = boost::json::parse(out.str()).as_object();
  EXPECT_EQ(json.at("verdict").as_string(), "invalid");
  EXPECT_EQ(json.at("failure_code").as_string(), "signingCredential.untrusted");
}

TEST_F(C2paCommandsTest, AFileWithoutAManifestSaysSo) {
  std::ostringstream out, err;
  EXPECT_EQ(VerifyC2paFile(Path("plain.png"), Path("trust.pem"), now_, out, err), kExitFailed);
  EXPECT_EQ(boost::json::parse(out.str()).at("verdict").as_string(), "no_manifest");
}

TEST_F(C2paCommandsTest, UnreadableInputsAreOneErrorLine) {
  std::ostringstream out, err;
  EXPECT_EQ(VerifyC2paFile(Path("missing.jpg"), "", now_, out, err), kExitFailed);
  EXPECT_THAT(err.str(), HasSubstr("cannot read"));
  std::ostringstream out2, err2;
  EXPECT_EQ(VerifyC2paFile(Path("signed.jpg"), Path("broken.pem"), now_, out2, err2), kExitFailed);
  EXPECT_THAT(err2.str(), HasSubstr("does not parse"));
  EXPECT_EQ(out2.str(), "");
  std::ostringstream out3, err3;
  EXPECT_EQ(VerifyC2paFile(Path("trust.pem"), "", now_, out3, err3), kExitFailed);
  EXPECT_THAT(err3.str(), HasSubstr("neither a JPEG nor a PNG"));
}

TEST_F(C2paCommandsTest, TheCommandLineShapeIsChecked) {
  CliOptions options;
  options.c2pa_trust = Path("trust.pem");
  std::ostringstream out, err;
  EXPECT_EQ(RunC2paCommand({"url", "parse"}, options, out, err), std::nullopt);
  EXPECT_EQ(RunC2paCommand({"c2pa"}, options, out, err), kExitUsage);
  EXPECT_EQ(RunC2paCommand({"c2pa", "sign", Path("signed.jpg")}, options, out, err), kExitUsage);
  EXPECT_EQ(RunC2paCommand({"c2pa", "verify", Path("signed.jpg")}, options, out, err), kExitOk);
  EXPECT_THAT(C2paUsage(), HasSubstr("c2pa verify FILE [--trust PEM]"));
}

}  // namespace
}  // namespace portcullis::cli
