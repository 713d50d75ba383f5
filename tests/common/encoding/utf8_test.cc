#include "common/encoding/utf8.h"

#include "gtest/gtest.h"

namespace portcullis::encoding {
namespace {

TEST(IsValidUtf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xE2\x82\xAC"));      // U+20AC
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
}

TEST(IsValidUtf8Test, RefusesIllFormedText) {
  EXPECT_FALSE(IsValidUtf8("\x80"));              // Lone continuation byte.
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // Truncated.
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // Overlong '/'.
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // Surrogate U+D800.
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // Past U+10FFFF.
  EXPECT_FALSE(IsValidUtf8("\xFF"));
}

}  // namespace
}  // namespace portcullis::encoding
