#include "common/encoding/percent.h"

#include "gtest/gtest.h"

namespace portcullis::encoding {
namespace {

TEST(PercentDecodeTest, DecodesEscapesAndKeepsMalformedOnesAsTheyAre) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("a+b%2B", PlusIs::kSpace), "a b+");
  EXPECT_EQ(PercentDecode("%00", PlusIs::kSpace), std::string("\0", 1));
}

TEST(DecodeFormComponentStrictlyTest, RefusesWhatItCannotDecodeExactly) {
  EXPECT_EQ(*DecodeFormComponentStrictly("https%3A%2F%2Fa.example%2F+x"), "https://a.example/ x");
  EXPECT_EQ(*DecodeFormComponentStrictly("%E2%82%AC"), "\xE2\x82\xAC");
  for (const char* bad : {"%", "%4", "%zz", "%C3", "%80", "%ED%A0%80"}) {
    EXPECT_EQ(DecodeFormComponentStrictly(bad).status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace portcullis::encoding
