#include "common/crypto/sha256.h"

#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

// FIPS 180-2 test vectors.
TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(ToHex(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, BinaryInputWithNulBytes) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(Sha256(with_nul), Sha256("a"));
}

}  // namespace
}  // namespace portcullis::crypto
