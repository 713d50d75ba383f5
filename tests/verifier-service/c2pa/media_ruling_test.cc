#include "verifier-service/src/c2pa/media_ruling.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"

namespace portcullis::verifier::c2pa {
namespace {

using ::portcullis::testing::C2paTestCredential;
using ::portcullis::testing::JpegScanOffset;
using ::portcullis::testing::MakeC2paTestCredential;
using ::portcullis::testing::PlainTestJpeg;
using ::portcullis::testing::PlainTestPng;
using ::portcullis::testing::SignC2paTestAsset;
using Action = MediaRuling::Action;

class VerifierC2paMediaRulingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    now_ = absl::Now();
    trusted_signer_ =
        MakeC2paTestCredential("Trusted", now_ - absl::Hours(1), now_ + absl::Hours(24));
    untrusted_signer_ =
        MakeC2paTestCredential("Untrusted", now_ - absl::Hours(1), now_ + absl::Hours(24));
    anchors_ = TrustAnchors::FromPem(trusted_signer_.certificate_pem).value();
    testing::C2paTestManifest generated;
    generated.digital_source_type = kTrainedAlgorithmicMedia;
    generated_ = SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, trusted_signer_, generated);
    camera_ = SignC2paTestAsset(PlainTestPng(), MediaType::kPng, trusted_signer_, {});
    untrusted_generated_ =
        SignC2paTestAsset(PlainTestJpeg(), MediaType::kJpeg, untrusted_signer_, generated);
    tampered_ = generated_;
    tampered_[JpegScanOffset(tampered_) + 10] ^= 1;
    garbage_ = generated_;
    garbage_[garbage_.find("jumb", garbage_.find("jumb") + 4) - 4] = '\x7F';
  }

  MediaRuling Rule(std::vector<MediaElement> media, bool verified = false,
                   bool require = false) const {
    return RuleOnMedia(
        media, anchors_, now_,
        MediaRulingOptions{.publisher_verified = verified, .require_c2pa_for_media = require},
        C2paLimits{});
  }

  absl::Time now_;
  C2paTestCredential trusted_signer_;
  C2paTestCredential untrusted_signer_;
  TrustAnchors anchors_;
  std::string generated_, camera_, untrusted_generated_, tampered_, garbage_;
};

TEST_F(VerifierC2paMediaRulingTest, AValidGeneratorManifestMakesTheItemSyntheticWithProvenance) {
  const MediaRuling ruling = Rule({{MediaType::kJpeg, generated_}, {MediaType::kPng, camera_}});
  EXPECT_EQ(ruling.action, Action::kNone);
  EXPECT_TRUE(ruling.synthetic);
  EXPECT_TRUE(ruling.provenance_valid);
  ASSERT_EQ(ruling.results.size(), 2u);
  EXPECT_EQ(ruling.results[0].digital_source_type, kTrainedAlgorithmicMedia);
  EXPECT_EQ(ruling.results[1].verdict, Verdict::kValid);
}

TEST_F(VerifierC2paMediaRulingTest, AFailedManifestIsADropNamingItsStatusCode) {
  const MediaRuling tampered = Rule({{MediaType::kJpeg, tampered_}});
  EXPECT_EQ(tampered.action, Action::kDrop);
  EXPECT_EQ(tampered.reason, "c2pa_assertion.dataHash.mismatch");
  EXPECT_FALSE(tampered.provenance_valid);
  const MediaRuling untrusted =
      Rule({{MediaType::kPng, camera_}, {MediaType::kJpeg, untrusted_generated_}});
  EXPECT_EQ(untrusted.action, Action::kDrop);
  EXPECT_EQ(untrusted.reason, "c2pa_signingCredential.untrusted");
  EXPECT_EQ(untrusted.results.size(), 2u);
}

TEST_F(VerifierC2paMediaRulingTest, AnUnparsableManifestIsQuarantinedOnlyFromAVerifiedPublisher) {
  const MediaRuling verified = Rule({{MediaType::kJpeg, garbage_}}, /*verified=*/true);
  EXPECT_EQ(verified.action, Action::kQuarantine);
  EXPECT_EQ(verified.reason, kReasonMalformedManifest);
  const MediaRuling unverified = Rule({{MediaType::kJpeg, garbage_}}, /*verified=*/false);
  EXPECT_EQ(unverified.action, Action::kDrop);
  EXPECT_EQ(unverified.reason, "c2pa_general.error");
}

TEST_F(VerifierC2paMediaRulingTest, MediaWithoutAManifestIsDroppedOnlyWhenRequired) {
  const MediaRuling optional = Rule({{MediaType::kJpeg, PlainTestJpeg()}});
  EXPECT_EQ(optional.action, Action::kNone);
  EXPECT_FALSE(optional.synthetic);
  EXPECT_FALSE(optional.provenance_valid);  // Nothing vouches for the plain file.
  const MediaRuling required =
      Rule({{MediaType::kJpeg, PlainTestJpeg()}}, /*verified=*/false, /*require=*/true);
  EXPECT_EQ(required.action, Action::kDrop);
  EXPECT_EQ(required.reason, kReasonMissingManifest);
  // One signed element does not vouch for an unsigned one beside it.
  const MediaRuling mixed =
      Rule({{MediaType::kJpeg, generated_}, {MediaType::kPng, PlainTestPng()}});
  EXPECT_EQ(mixed.action, Action::kNone);
  EXPECT_TRUE(mixed.synthetic);
  EXPECT_FALSE(mixed.provenance_valid);
}

TEST_F(VerifierC2paMediaRulingTest, NoMediaNoRuling) {
  const MediaRuling ruling = Rule({}, true, true);
  EXPECT_EQ(ruling.action, Action::kNone);
  EXPECT_FALSE(ruling.synthetic);
  EXPECT_FALSE(ruling.provenance_valid);
  EXPECT_TRUE(ruling.results.empty());
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
