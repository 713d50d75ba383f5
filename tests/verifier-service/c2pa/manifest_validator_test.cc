#include "verifier-service/src/c2pa/manifest_validator.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"
#include "verifier-service/src/c2pa/status_codes.h"

namespace portcullis::verifier::c2pa {
namespace {

using ::portcullis::testing::C2paTestCredential;
using ::portcullis::testing::C2paTestManifest;
using ::portcullis::testing::JpegScanOffset;
using ::portcullis::testing::MakeC2paTestCredential;
using ::portcullis::testing::PlainTestJpeg;
using ::portcullis::testing::PlainTestPng;
using ::portcullis::testing::SignC2paTestAsset;
using ::testing::ElementsAre;

std::vector<std::string> Codes(const ValidationResult& result) {
  std::vector<std::string> codes;
  for (const ValidationStatus& status : result.statuses) {
    codes.push_back(status.code);
  }
  return codes;
}

class VerifierC2paManifestValidatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    now_ = absl::Now();
    signer_ =
        MakeC2paTestCredential("Trusted Signer", now_ - absl::Hours(1), now_ + absl::Hours(24));
    stranger_ = MakeC2paTestCredential("Stranger", now_ - absl::Hours(1), now_ + absl::Hours(24));
    trusted_ = TrustAnchors::FromPem(signer_.certificate_pem).value();
  }

  ValidationResult Validate(const std::string& asset, MediaType type) const {
    return ValidateAsset(asset, type, trusted_, now_, C2paLimits{});
  }

  absl::Time now_;
  C2paTestCredential signer_;
  C2paTestCredential stranger_;
  TrustAnchors trusted_;
};

TEST_F(VerifierC2paManifestValidatorTest, AnUntouchedSignedJpegIsValid) {
  C2paTestManifest manifest;
  manifest.digital_source_type = kTrainedAlgorithmicMedia;
  const std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer_, manifest);
  const ValidationResult result = Validate(asset, MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kValid) << result.failure_code;
  EXPECT_EQ(result.failure_code, "");
  EXPECT_THAT(Codes(result), ElementsAre("claimSignature.validated", "signingCredential.trusted",
                                         "assertion.hashedURI.match", "assertion.hashedURI.match",
                                         "assertion.dataHash.match"));
  EXPECT_EQ(result.signer_subject, "CN=Trusted Signer");
  EXPECT_EQ(result.claim_generator, "portcullis-test-signer/1");
  EXPECT_EQ(result.digital_source_type, kTrainedAlgorithmicMedia);
  EXPECT_TRUE(IsAiDigitalSourceType(result.digital_source_type));
}

TEST_F(VerifierC2paManifestValidatorTest, AnUntouchedSignedPngIsValid) {
  const std::string asset = SignC2paTestAsset(PlainTestPng(), MediaType::kPng, signer_, {});
  const ValidationResult result = Validate(asset, MediaType::kPng);
  EXPECT_EQ(result.verdict, Verdict::kValid) << result.failure_code;
  EXPECT_EQ(result.digital_source_type, "");
}

TEST_F(VerifierC2paManifestValidatorTest, ChangedPixelsFailTheDataHash) {
  std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer_, {});
  asset[JpegScanOffset(asset) + 10] ^= 0x01;  // A byte of the entropy-coded image data.
  const ValidationResult result = Validate(asset, MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kInvalid);
  EXPECT_EQ(result.failure_code, codes::kAssertionDataHashMismatch);
  // The signature and the claim's references are still fine: only the binding to the pixels broke.
  EXPECT_THAT(Codes(result), ::testing::Contains("claimSignature.validated"));
}

TEST_F(VerifierC2paManifestValidatorTest, ASignerOutsideTheTrustListIsUntrusted) {
  const std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, stranger_, {});
  const ValidationResult result = Validate(asset, MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kInvalid);
  EXPECT_EQ(result.failure_code, codes::kSigningCredentialUntrusted);
  EXPECT_EQ(result.signer_subject, "CN=Stranger");
  // With no anchors at all, every signer is untrusted.
  EXPECT_EQ(ValidateAsset(asset, MediaType::kJpeg, TrustAnchors(), now_, C2paLimits{}).failure_code,
            codes::kSigningCredentialUntrusted);
  // Trusting the stranger's certificate too makes it valid.
  const TrustAnchors both =
      TrustAnchors::Union(trusted_, TrustAnchors::FromPem(stranger_.certificate_pem).value());
  EXPECT_EQ(ValidateAsset(asset, MediaType::kJpeg, both, now_, C2paLimits{}).verdict,
            Verdict::kValid);
}

TEST_F(VerifierC2paManifestValidatorTest, AnExpiredCertificateIsExpired) {
  const C2paTestCredential old = MakeC2paTestCredential("Old Signer", now_ - absl::Hours(24 * 400),
                                                        now_ - absl::Hours(24 * 35));
  const TrustAnchors anchors = TrustAnchors::FromPem(old.certificate_pem).value();
  const std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, old, {});
  const ValidationResult result =
      ValidateAsset(asset, MediaType::kJpeg, anchors, now_, C2paLimits{});
  EXPECT_EQ(result.verdict, Verdict::kInvalid);
  EXPECT_EQ(result.failure_code, codes::kSigningCredentialExpired);
  // At a time inside its validity it is trusted.
  EXPECT_EQ(
      ValidateAsset(asset, MediaType::kJpeg, anchors, now_ - absl::Hours(24 * 100), C2paLimits{})
          .verdict,
      Verdict::kValid);
}

TEST_F(VerifierC2paManifestValidatorTest, ATrustedTimeStampJudgesTheChainAtSigningTime) {
  const C2paTestCredential signer = MakeC2paTestCredential(
      "Signed Last Week", now_ - absl::Hours(24 * 10), now_ - absl::Hours(24 * 5));
  const C2paTestCredential authority = MakeC2paTestCredential(
      "Test TSA", now_ - absl::Hours(24 * 30), now_ + absl::Hours(24 * 30), /*time_stamping=*/true);
  C2paTestManifest manifest;
  manifest.timestamp_authority = &authority;
  manifest.timestamp_time = now_ - absl::Hours(24 * 7);
  const std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer, manifest);

  // The signer and the time-stamping authority both trusted: valid, judged a week ago.
  const TrustAnchors both =
      TrustAnchors::FromPem(signer.certificate_pem + authority.certificate_pem).value();
  const ValidationResult stamped = ValidateAsset(asset, MediaType::kJpeg, both, now_, C2paLimits{});
  EXPECT_EQ(stamped.verdict, Verdict::kValid) << stamped.failure_code;
  EXPECT_THAT(Codes(stamped), ::testing::Contains("timeStamp.trusted"));

  // The authority not trusted: the time-stamp is ignored (informational), the chain judged now.
  const TrustAnchors signer_only = TrustAnchors::FromPem(signer.certificate_pem).value();
  const ValidationResult unstamped =
      ValidateAsset(asset, MediaType::kJpeg, signer_only, now_, C2paLimits{});
  EXPECT_EQ(unstamped.failure_code, codes::kSigningCredentialExpired);
  EXPECT_THAT(Codes(unstamped), ::testing::Contains("timeStamp.untrusted"));

  // A time-stamp dated after the certificate expired does not help.
  manifest.timestamp_time = now_ - absl::Hours(24 * 2);
  const std::string late = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer, manifest);
  EXPECT_EQ(ValidateAsset(late, MediaType::kJpeg, both, now_, C2paLimits{}).failure_code,
            codes::kSigningCredentialExpired);
}

TEST_F(VerifierC2paManifestValidatorTest, AChangedClaimFailsTheSignature) {
  std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer_, {});
  const size_t generator = asset.find("portcullis-test-signer/1");
  ASSERT_NE(generator, std::string::npos);
  asset[generator] = 'P';
  const ValidationResult result = Validate(asset, MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kInvalid);
  EXPECT_EQ(result.failure_code, codes::kClaimSignatureMismatch);
}

TEST_F(VerifierC2paManifestValidatorTest, AChangedAssertionFailsItsHashedUri) {
  C2paTestManifest manifest;
  manifest.digital_source_type = kTrainedAlgorithmicMedia;
  std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer_, manifest);
  const size_t declared = asset.find("trainedAlgorithmicMedia");
  ASSERT_NE(declared, std::string::npos);
  asset[declared] = 'T';  // Someone edits the declared source type after signing.
  const ValidationResult result = Validate(asset, MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kInvalid);
  EXPECT_EQ(result.failure_code, codes::kAssertionHashedUriMismatch);
  // An assertion that failed its hash is not believed.
  EXPECT_EQ(result.digital_source_type, "");
}

TEST_F(VerifierC2paManifestValidatorTest, APlainFileHasNoManifest) {
  const ValidationResult result = Validate(PlainTestJpeg(), MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kNoManifest);
  EXPECT_TRUE(result.statuses.empty());
}

TEST_F(VerifierC2paManifestValidatorTest, ATruncatedJumbfBoxIsMalformed) {
  std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer_, {});
  // The manifest superbox's LBox (after SOI, the APP11 header and the store's own two headers):
  // make it claim more bytes than the store holds.
  const size_t manifest_box = asset.find("jumb", asset.find("jumb") + 4) - 4;
  asset[manifest_box] = '\x7F';
  const ValidationResult result = Validate(asset, MediaType::kJpeg);
  EXPECT_EQ(result.verdict, Verdict::kMalformed);
  EXPECT_EQ(result.failure_code, codes::kGeneralError);
}

TEST_F(VerifierC2paManifestValidatorTest, EveryChangeToTheSignedClaimIsCaught) {
  const std::string asset = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, signer_, {});
  // The claim's CBOR: a map of six starting with "claim_generator", up to the next superbox.
  const size_t start = asset.find(
      "\xA6\x6F"
      "claim_generator");
  ASSERT_NE(start, std::string::npos);
  const size_t end = asset.find("jumb", start) - 4;
  for (size_t i = start; i < end; ++i) {
    std::string changed = asset;
    changed[i] ^= 0x5A;
    const ValidationResult result = Validate(changed, MediaType::kJpeg);
    EXPECT_NE(result.verdict, Verdict::kValid) << "byte " << i;
  }
  // Every other byte of the file before the image data: any verdict, never a crash.
  for (size_t i = 0; i < JpegScanOffset(asset); ++i) {
    std::string changed = asset;
    changed[i] ^= 0xA5;
    (void)Validate(changed, MediaType::kJpeg);
  }
}

TEST(VerifierC2paDigitalSourceTypeTest, KnowsTheGenerativeTypes) {
  EXPECT_TRUE(IsAiDigitalSourceType(kTrainedAlgorithmicMedia));
  EXPECT_TRUE(IsAiDigitalSourceType(
      "http://cv.iptc.org/newscodes/digitalsourcetype/compositeWithTrainedAlgorithmicMedia"));
  EXPECT_TRUE(IsAiDigitalSourceType("trainedAlgorithmicMedia"));
  EXPECT_FALSE(
      IsAiDigitalSourceType("http://cv.iptc.org/newscodes/digitalsourcetype/digitalCapture"));
  EXPECT_FALSE(IsAiDigitalSourceType(""));
  EXPECT_EQ(VerdictName(Verdict::kMalformed), "malformed");
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
