#include "verifier-service/src/c2pa/cose_sign1.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"
#include "verifier-service/src/c2pa/asset_container.h"
#include "verifier-service/src/c2pa/jumbf.h"

namespace portcullis::verifier::c2pa {
namespace {

// The COSE_Sign1 and the claim of a manifest made by the test signer.
struct Signed {
  std::string store;
  std::string cose;
  std::string claim;
};

Signed MakeSigned() {
  const testing::C2paTestCredential credential = testing::MakeC2paTestCredential(
      "COSE Test", absl::Now() - absl::Hours(1), absl::Now() + absl::Hours(1));
  const std::string asset =
      testing::SignC2paTestAsset(testing::PlainTestPng(), MediaType::kPng, credential, {});
  Signed out;
  out.store = **ExtractManifestStore(asset, MediaType::kPng, C2paLimits{});
  const JumbfBox root = *ParseJumbfSuperbox(out.store, C2paLimits{});
  const JumbfBox& manifest = root.children.back();
  out.cose = std::string(manifest.FindChild("c2pa.signature")->FindContent("cbor")->payload);
  out.claim = std::string(manifest.FindChild("c2pa.claim")->FindContent("cbor")->payload);
  return out;
}

TEST(VerifierC2paCoseTest, ParsesAndVerifiesAnEs256Signature) {
  const Signed s = MakeSigned();
  const absl::StatusOr<CoseSign1> sign1 = ParseCoseSign1(s.cose, C2paLimits{});
  ASSERT_TRUE(sign1.ok()) << sign1.status();
  EXPECT_EQ(sign1->algorithm, kCoseEs256);
  ASSERT_EQ(sign1->x5chain.size(), 1u);
  EXPECT_EQ(sign1->signature.size(), 64u);
  EXPECT_EQ(VerifyCoseSign1(*sign1, s.claim), SignatureCheck::kValid);
  EXPECT_EQ(VerifyCoseSign1(*sign1, s.claim + " "), SignatureCheck::kMismatch);

  CoseSign1 flipped = *sign1;
  flipped.signature[5] ^= 1;
  EXPECT_EQ(VerifyCoseSign1(flipped, s.claim), SignatureCheck::kMismatch);
  CoseSign1 other_algorithm = *sign1;
  other_algorithm.algorithm = kCosePs256;  // An RSA algorithm with an EC key.
  EXPECT_EQ(VerifyCoseSign1(other_algorithm, s.claim), SignatureCheck::kUnsupportedAlgorithm);
  other_algorithm.algorithm = 12345;
  EXPECT_EQ(VerifyCoseSign1(other_algorithm, s.claim), SignatureCheck::kUnsupportedAlgorithm);
  CoseSign1 bad_certificate = *sign1;
  bad_certificate.x5chain[0] = "not DER";
  EXPECT_EQ(VerifyCoseSign1(bad_certificate, s.claim), SignatureCheck::kBadCertificate);
  // A signature of the wrong length is neither r||s nor DER.
  CoseSign1 short_signature = *sign1;
  short_signature.signature.resize(63);
  EXPECT_EQ(VerifyCoseSign1(short_signature, s.claim), SignatureCheck::kMismatch);
}

TEST(VerifierC2paCoseTest, RefusesWhatIsNotACoseSign1) {
  const C2paLimits limits;
  EXPECT_FALSE(ParseCoseSign1("", limits).ok());
  EXPECT_FALSE(ParseCoseSign1("\xA0", limits).ok());                                      // A map.
  EXPECT_FALSE(ParseCoseSign1(std::string("\xD1\x84\x40\xA0\xF6\x40", 6), limits).ok());  // Tag 17.
  // No algorithm, no chain.
  EXPECT_FALSE(ParseCoseSign1(std::string("\xD2\x84\x40\xA0\xF6\x40", 6), limits).ok());
  // An attached payload.
  EXPECT_FALSE(
      ParseCoseSign1(std::string("\xD2\x84\x43\xA1\x01\x26\xA1\x18\x21\x41\x00\x41\x01\x40", 14),
                     limits)
          .ok());
  // alg ES256 and a one-certificate chain: parses (verification decides the rest).
  const absl::StatusOr<CoseSign1> minimal = ParseCoseSign1(
      std::string("\xD2\x84\x43\xA1\x01\x26\xA1\x18\x21\x41\x00\xF6\x40", 13), limits);
  ASSERT_TRUE(minimal.ok()) << minimal.status();
  EXPECT_EQ(minimal->x5chain.size(), 1u);
  EXPECT_EQ(VerifyCoseSign1(*minimal, ""), SignatureCheck::kBadCertificate);
}

TEST(VerifierC2paCoseTest, CapsTheChainLength) {
  // x5chain with 9 one-byte "certificates".
  std::string chain("\x89", 1);
  for (int i = 0; i < 9; ++i) {
    chain += std::string("\x41\x00", 2);
  }
  const std::string cose = absl::StrCat(std::string("\xD2\x84\x43\xA1\x01\x26\xA1\x18\x21", 9),
                                        chain, std::string("\xF6\x40", 2));
  EXPECT_FALSE(ParseCoseSign1(cose, C2paLimits{}).ok());
}

TEST(VerifierC2paCoseTest, WritesTheSigStructure) {
  EXPECT_EQ(CoseSigStructure("\xA0", "ab"), std::string("\x84\x6ASignature1\x41\xA0\x40\x42"
                                                        "ab",
                                                        18));
}

}  // namespace
}  // namespace portcullis::verifier::c2pa
