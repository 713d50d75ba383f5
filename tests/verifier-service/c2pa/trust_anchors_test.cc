#include "verifier-service/src/c2pa/trust_anchors.h"

#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"

namespace portcullis::verifier::c2pa {
namespace {

using ::portcullis::testing::C2paTestCredential;
using ::portcullis::testing::MakeC2paTestCredential;

TEST(VerifierC2paTrustAnchorsTest, ReadsPemListsAndRefusesBrokenOnes) {
  const absl::Time now = absl::Now();
  const C2paTestCredential a =
      MakeC2paTestCredential("A", now - absl::Hours(1), now + absl::Hours(1));
  const C2paTestCredential b =
      MakeC2paTestCredential("B", now - absl::Hours(1), now + absl::Hours(1));
  const absl::StatusOr<TrustAnchors> both =
      TrustAnchors::FromPem(a.certificate_pem + b.certificate_pem);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->size(), 2u);
  EXPECT_FALSE(TrustAnchors::FromPem("").ok());
  EXPECT_FALSE(TrustAnchors::FromPem("not a certificate").ok());
  EXPECT_FALSE(
      TrustAnchors::FromPem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").ok());
}

TEST(VerifierC2paTrustAnchorsTest, DecidesTrustedUntrustedExpiredAndInvalid) {
  const absl::Time now = absl::Now();
  const C2paTestCredential signer =
      MakeC2paTestCredential("Signer", now - absl::Hours(1), now + absl::Hours(24));
  const C2paTestCredential other =
      MakeC2paTestCredential("Other", now - absl::Hours(1), now + absl::Hours(24));
  const TrustAnchors anchors = TrustAnchors::FromPem(signer.certificate_pem).value();
  EXPECT_EQ(anchors.Check({signer.certificate_der}, now), CredentialCheck::kTrusted);
  EXPECT_EQ(anchors.Check({other.certificate_der}, now), CredentialCheck::kUntrusted);
  EXPECT_EQ(TrustAnchors().Check({signer.certificate_der}, now), CredentialCheck::kUntrusted);
  EXPECT_EQ(anchors.Check({signer.certificate_der}, now + absl::Hours(48)),
            CredentialCheck::kExpired);
  EXPECT_EQ(anchors.Check({signer.certificate_der}, now - absl::Hours(48)),
            CredentialCheck::kExpired);
  EXPECT_EQ(anchors.Check({}, now), CredentialCheck::kInvalid);
  EXPECT_EQ(anchors.Check({"garbage"}, now), CredentialCheck::kInvalid);
  EXPECT_EQ(anchors.Check({signer.certificate_der, "garbage"}, now), CredentialCheck::kInvalid);
}

TEST(VerifierC2paTrustAnchorsTest, GarbageIsNoTimeStamp) {
  const absl::Time now = absl::Now();
  const C2paTestCredential authority =
      MakeC2paTestCredential("TSA", now - absl::Hours(1), now + absl::Hours(1), true);
  const TrustAnchors anchors = TrustAnchors::FromPem(authority.certificate_pem).value();
  EXPECT_FALSE(anchors.VerifyTimestamp("garbage", "data", now).has_value());
  EXPECT_FALSE(anchors.VerifyTimestamp("", "data", now).has_value());
  EXPECT_FALSE(TrustAnchors().VerifyTimestamp("garbage", "data", now).has_value());
}

TEST(VerifierC2paTrustAnchorsTest, NamesTheSubject) {
  const absl::Time now = absl::Now();
  const C2paTestCredential signer =
      MakeC2paTestCredential("Camera Maker, Inc.", now, now + absl::Hours(1));
  EXPECT_EQ(CertificateSubject(signer.certificate_der), "CN=Camera Maker\\, Inc.");
  EXPECT_EQ(CertificateSubject("garbage"), "");
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
