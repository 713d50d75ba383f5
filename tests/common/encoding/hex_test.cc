#include "common/encoding/hex.h"

#include "gtest/gtest.h"

namespace portcullis::encoding {
namespace {

TEST(HexDigitValueTest, DigitsBothCasesAndNothingElse) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  for (int c : {int{'g'}, int{'G'}, int{'/'}, int{':'}, int{'@'}, int{'`'}, int{' '}, 0, 0xB0}) {
    EXPECT_EQ(HexDigitValue(c), -1) << c;
  }
}

}  // namespace
}  // namespace portcullis::encoding
