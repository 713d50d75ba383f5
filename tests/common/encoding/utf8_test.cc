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

TEST(DecodeUtf8AtTest, ReadsOneCodePointOrNothing) {
  const absl::string_view text = "a\xE2\x82\xAC\xF0\x9F\x98\x80\xC0\xAF";
  EXPECT_EQ(DecodeUtf8At(text, 0).code_point, 0x61u);
  EXPECT_EQ(DecodeUtf8At(text, 0).length, 1u);
  EXPECT_EQ(DecodeUtf8At(text, 1).code_point, 0x20ACu);
  EXPECT_EQ(DecodeUtf8At(text, 1).length, 3u);
  EXPECT_EQ(DecodeUtf8At(text, 4).code_point, 0x1F600u);
  EXPECT_EQ(DecodeUtf8At(text, 4).length, 4u);
  EXPECT_EQ(DecodeUtf8At(text, 2).length, 0u) << "a continuation byte starts nothing";
  EXPECT_EQ(DecodeUtf8At(text, 8).length, 0u) << "overlong";
  EXPECT_EQ(DecodeUtf8At("\xE2\x82", 0).length, 0u) << "truncated";
}

}  // namespace
}  // namespace portcullis::encoding
