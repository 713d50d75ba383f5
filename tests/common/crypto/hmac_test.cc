#include "common/crypto/hmac.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

std::string Hex(const HmacSha256Digest& digest) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

// RFC 4231 §4, HMAC-SHA-256 rows of test cases 1-7.
TEST(HmacSha256Test, Rfc4231Vectors) {
  struct Case {
    std::string key;
    std::string data;
    std::string expected_hex;
  };
  const std::string key_aa_131(131, '\xaa');
  const Case cases[] = {
      {std::string(20, '\x0b'), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {absl::HexStringToBytes("0102030405060708090a0b0c0d0e0f10111213141516171819"),
       std::string(50, '\xcd'), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {key_aa_131, "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {key_aa_131,
       "This is a test using a larger than block-size key and a larger than block-size data. The "
       "key needs to be hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Hex(HmacSha256(c.key, c.data)), c.expected_hex) << c.data;
  }
  // Test case 5 publishes only the first 128 bits.
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\x0c'), "Test With Truncation")).substr(0, 32),
            "a3b6167473100ee06e0c796c2955552b");
}

TEST(HmacSha256Test, EmptyKeyAndData) {
  // HMAC-SHA256("", "") is well defined.
  EXPECT_EQ(Hex(HmacSha256("", "")),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

TEST(ConstantTimeEqualsTest, ComparesBytes) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

}  // namespace
}  // namespace portcullis::crypto
