#include "verifier-service/src/html/plain_text.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis::verifier::html {
namespace {

TEST(PlainTextTest, CollapsesWhitespaceAndControlCharacters) {
  EXPECT_EQ(CollapseWhitespace("  Hello\n\t  world \r\n"), "Hello world");
  EXPECT_EQ(CollapseWhitespace(std::string("a\0b\x7f\x01"
                                           "c",
                                           6)),
            "a b c");
  EXPECT_EQ(CollapseWhitespace(" \n "), "");
  // Non-ASCII text (and a no-break space) is kept as it is.
  EXPECT_EQ(CollapseWhitespace("caf\xC3\xA9\xC2\xA0ok"), "caf\xC3\xA9\xC2\xA0ok");
}

TEST(PlainTextTest, Utf8PrefixNeverCutsACharacter) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a é € 😀
  EXPECT_EQ(Utf8Prefix(text, 100), text);
  EXPECT_EQ(Utf8Prefix(text, 1), "a");
  EXPECT_EQ(Utf8Prefix(text, 2), "a");
  EXPECT_EQ(Utf8Prefix(text, 3), "a\xC3\xA9");
  EXPECT_EQ(Utf8Prefix(text, 5), "a\xC3\xA9");
  EXPECT_EQ(Utf8Prefix(text, 6), "a\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(Utf8Prefix(text, 9), "a\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(Utf8Prefix(text, 0), "");
}

TEST(PlainTextTest, CapPlainTextSaysWhetherItCut) {
  const CappedText whole = CapPlainText(" short  text ", 10);
  EXPECT_EQ(whole.text, "short text");
  EXPECT_FALSE(whole.truncated);
  const CappedText cut = CapPlainText("hello wonderful world", 6);
  EXPECT_EQ(cut.text, "hello");  // the trailing space of the cut is dropped
  EXPECT_TRUE(cut.truncated);
  const CappedText euro = CapPlainText("\xE2\x82\xAC\xE2\x82\xAC", 4);
  EXPECT_EQ(euro.text, "\xE2\x82\xAC");
  EXPECT_TRUE(euro.truncated);
}

}  // namespace
}  // namespace portcullis::verifier::html
