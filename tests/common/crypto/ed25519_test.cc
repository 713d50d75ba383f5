#include "common/crypto/ed25519.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

// RFC 8032 §7.1, TEST 1 (empty message).
const std::string kTest1Seed =
    absl::HexStringToBytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const std::string kTest1PublicKey =
    absl::HexStringToBytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const std::string kTest1Signature = absl::HexStringToBytes(
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b4"
    "6bd25bf5f0595bbe24655141438e7a100b");

TEST(Ed25519Test, Rfc8032Test1Verifies) {
  const absl::StatusOr<Ed25519PublicKey> key = Ed25519PublicKey::FromRaw(kTest1PublicKey);
  ASSERT_TRUE(key.ok());
  EXPECT_TRUE(key->Verify("", kTest1Signature));
}

TEST(Ed25519Test, Rfc8032Test1SignsAndDerivesThePublicKey) {
  const absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::FromSeed(kTest1Seed);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->Sign(""), kTest1Signature);
  EXPECT_EQ(key->PublicKey().raw(), kTest1PublicKey);
}

TEST(Ed25519Test, RefusesAnythingElse) {
  const Ed25519PublicKey key = *Ed25519PublicKey::FromRaw(kTest1PublicKey);
  EXPECT_FALSE(key.Verify("x", kTest1Signature));  // Another message.
  std::string flipped = kTest1Signature;
  flipped[10] ^= 0x01;
  EXPECT_FALSE(key.Verify("", flipped));
  EXPECT_FALSE(key.Verify("", kTest1Signature.substr(0, 63)));
  EXPECT_FALSE(key.Verify("", kTest1Signature + "x"));
  EXPECT_FALSE(key.Verify("", ""));
  // S >= L (non-canonical): the RFC 8032 check OpenSSL applies.
  std::string big_s = kTest1Signature;
  for (size_t i = 32; i < 64; ++i) {
    big_s[i] = '\xff';
  }
  EXPECT_FALSE(key.Verify("", big_s));
  const Ed25519PublicKey other = Ed25519PrivateKey::Generate().PublicKey();
  EXPECT_FALSE(other.Verify("", kTest1Signature));
}

TEST(Ed25519Test, KeySizesAreChecked) {
  EXPECT_FALSE(Ed25519PublicKey::FromRaw(kTest1PublicKey.substr(1)).ok());
  EXPECT_FALSE(Ed25519PublicKey::FromRaw("").ok());
  EXPECT_FALSE(Ed25519PrivateKey::FromSeed(kTest1Seed + "x").ok());
}

TEST(Ed25519Test, GeneratedKeysSignAndVerify) {
  const Ed25519PrivateKey a = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey b = Ed25519PrivateKey::Generate();
  EXPECT_NE(a.seed(), b.seed());
  const std::string signature = a.Sign("message");
  EXPECT_TRUE(a.PublicKey().Verify("message", signature));
  EXPECT_FALSE(b.PublicKey().Verify("message", signature));
}

TEST(Ed25519VerifierTest, DecidesAsThePublicKeyDoes) {
  const absl::StatusOr<Ed25519Verifier> verifier = Ed25519Verifier::FromRaw(kTest1PublicKey);
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  EXPECT_TRUE(verifier->Verify("", kTest1Signature));
  EXPECT_FALSE(verifier->Verify("x", kTest1Signature));
  std::string flipped = kTest1Signature;
  flipped[10] ^= 0x01;
  EXPECT_FALSE(verifier->Verify("", flipped));
  EXPECT_FALSE(verifier->Verify("", kTest1Signature.substr(0, 63)));
  EXPECT_FALSE(verifier->Verify("", ""));
  const Ed25519PrivateKey other = Ed25519PrivateKey::Generate();
  EXPECT_FALSE(
      Ed25519Verifier::FromRaw(other.PublicKey().raw())->Verify("", kTest1Signature));
  EXPECT_FALSE(Ed25519Verifier::FromRaw(kTest1PublicKey.substr(1)).ok());
  EXPECT_FALSE(Ed25519Verifier::FromRaw("").ok());
}

TEST(Ed25519VerifierTest, OneVerifierServesManyThreadsAtOnce) {
  const Ed25519PrivateKey key = Ed25519PrivateKey::Generate();
  const Ed25519Verifier verifier = *Ed25519Verifier::FromRaw(key.PublicKey().raw());
  const std::string good = key.Sign("message");
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const Ed25519Verifier copy = verifier;  // Copies share the decoded key.
      for (int i = 0; i < 50; ++i) {
        wrong[t] += copy.Verify("message", good) ? 0 : 1;
        wrong[t] += copy.Verify("massage", good) ? 1 : 0;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace portcullis::crypto
