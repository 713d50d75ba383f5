#include "common/crypto/random.h"

#include <set>

#include "gtest/gtest.h"

namespace portcullis::crypto {
namespace {

TEST(RandomHexTest, LengthAlphabetAndNoRepeats) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string value = RandomHex(16);
    ASSERT_EQ(value.size(), 32u);
    EXPECT_EQ(value.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 100u);
}

}  // namespace
}  // namespace portcullis::crypto
