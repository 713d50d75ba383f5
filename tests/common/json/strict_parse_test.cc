#include "common/json/strict_parse.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis::json {
namespace {

struct Refusal {
  ParseErrorKind kind;
  std::optional<std::string> path;
  absl::StatusCode code;
};

Refusal RefusalOf(absl::string_view text, const ParseOptions& options = ParseOptions()) {
  const absl::StatusOr<boost::json::value> parsed = ParseStrict(text, options);
  EXPECT_FALSE(parsed.ok()) << "accepted: " << text;
  if (parsed.ok()) {
    return {ParseErrorKind::kSyntax, std::nullopt, absl::StatusCode::kOk};
  }
  const std::optional<ParseErrorKind> kind = ParseErrorKindOf(parsed.status());
  EXPECT_TRUE(kind.has_value()) << parsed.status();
  return {kind.value_or(ParseErrorKind::kSyntax), ParseErrorPathOf(parsed.status()),
          parsed.status().code()};
}

TEST(StrictParseTest, AcceptsOrdinaryDocuments) {
  const absl::StatusOr<boost::json::value> parsed =
      ParseStrict(R"( {"id":"a1","n":[1,2.5,-3e2,true,false,null],"o":{}} )");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->at("id").as_string(), "a1");
  // Every number is a double.
  EXPECT_TRUE(parsed->at("n").as_array()[0].is_double());
  EXPECT_EQ(parsed->at("n").as_array()[2].as_double(), -300.0);
  EXPECT_TRUE(ParseStrict("\"\\u00e9\xC3\xA9\"").ok());
  EXPECT_TRUE(ParseStrict("\"\\ud83d\\ude02\"").ok());
  EXPECT_TRUE(ParseStrict("0").ok());
  EXPECT_TRUE(ParseStrict("0.0").ok());
}

TEST(StrictParseTest, NotJsonIsSyntax) {
  for (const char* text : {"",
                           " ",
                           "{",
                           "[1,]",
                           "{\"a\":1,}",
                           "01",
                           "+1",
                           ".5",
                           "1.",
                           "NaN",
                           "Infinity",
                           "'a'",
                           "{\"a\" 1}",
                           "[1] x",
                           "// c\n1",
                           "\"a\x01\"",
                           "\xEF\xBB\xBF{}",
                           "\"\\x\"",
                           "\"\\u12g4\"",
                           "tru"}) {
    const Refusal refusal = RefusalOf(text);
    EXPECT_EQ(refusal.kind, ParseErrorKind::kSyntax) << text;
    EXPECT_TRUE(IsMalformed(refusal.kind));
    EXPECT_EQ(refusal.code, absl::StatusCode::kInvalidArgument);
  }
}

TEST(StrictParseTest, InvalidUtf8AndLoneSurrogatesAreInvalidUnicode) {
  for (const char* text : {
           "\"\\ud800\"",           // lone high surrogate
           "\"\\udc00\"",           // lone low surrogate
           "\"\\ud800\\u0041\"",    // high surrogate followed by a non-surrogate
           "\"\\ud800\\ud800\"",    // two highs
           "{\"\\udfff\":1}",       // in a key
           "\"\xff\"",              // never valid in UTF-8
           "\"\xC0\x80\"",          // overlong NUL
           "\"\xE0\x80\xAF\"",      // overlong "/"
           "\"\xED\xA0\x80\"",      // encoded surrogate U+D800
           "\"\xF4\x90\x80\x80\"",  // above U+10FFFF
           "\"\xC3\"",              // truncated
           "\"\x80\"",              // lone continuation byte
       }) {
    const Refusal refusal = RefusalOf(text);
    EXPECT_EQ(refusal.kind, ParseErrorKind::kInvalidUnicode) << text;
    EXPECT_TRUE(IsMalformed(refusal.kind));
  }
  // An escaped backslash before "u" is not an escape.
  EXPECT_TRUE(ParseStrict(R"("\\ud800")").ok());
}

TEST(StrictParseTest, DuplicateKeysAnywhereNameTheMember) {
  Refusal refusal = RefusalOf(R"({"a":1,"a":2})");
  EXPECT_EQ(refusal.kind, ParseErrorKind::kDuplicateKey);
  EXPECT_EQ(refusal.path, "/a");
  EXPECT_FALSE(IsMalformed(refusal.kind));

  refusal = RefusalOf(R"({"items":[{"x":1},{"meta":{"k":"v","k":"w"}}]})");
  EXPECT_EQ(refusal.kind, ParseErrorKind::kDuplicateKey);
  EXPECT_EQ(refusal.path, "/items/1/meta/k");

  // Names compare after unescaping.
  refusal = RefusalOf(R"({"a":1,"\u0061":2})");
  EXPECT_EQ(refusal.kind, ParseErrorKind::kDuplicateKey);
  EXPECT_EQ(refusal.path, "/a");

  // RFC 6901 escaping of "/" and "~".
  refusal = RefusalOf(R"({"a/b":{"c~d":0,"c~d":1}})");
  EXPECT_EQ(refusal.path, "/a~1b/c~0d");

  // The same name in sibling objects is fine.
  EXPECT_TRUE(ParseStrict(R"([{"a":1},{"a":2}])").ok());
}

TEST(StrictParseTest, NumbersOutsideIJsonAreRefused) {
  for (const char* text :
       {"1e400", "-1e400", "1e99999999999999999999", "1e-400", "-1e-400", "2.4703282292062327e-324",
        "9007199254740993", "-9007199254740993", "123456789012345678901234567890",
        "18446744073709551617", "295147905179352830001"}) {
    const Refusal refusal = RefusalOf(text);
    EXPECT_EQ(refusal.kind, ParseErrorKind::kNumberOutOfRange) << text;
    EXPECT_FALSE(IsMalformed(refusal.kind));
  }
  const Refusal nested = RefusalOf(R"({"a":[0,1e400]})");
  EXPECT_EQ(nested.path, "/a/1");

  // Exactly representable integers, subnormals, the largest double and rounded fractions pass.
  for (const char* text : {"9007199254740992", "-9007199254740992", "9007199254740994",
                           "18446744073709551616", "5e-324", "1.7976931348623157e308",
                           "333333333.33333329", "1E30", "0.000000000000000000000000001",
                           // The canonical spelling of 2^68, which is not its exact value.
                           "295147905179352830000"}) {
    EXPECT_TRUE(ParseStrict(text).ok()) << text;
  }
}

TEST(StrictParseTest, NegativeZeroIsRefused) {
  for (const char* text : {"-0", "-0.0", "-0e0", "-0E+3", "[1,-0]"}) {
    const Refusal refusal = RefusalOf(text);
    EXPECT_EQ(refusal.kind, ParseErrorKind::kNegativeZero) << text;
    EXPECT_FALSE(IsMalformed(refusal.kind));
  }
}

TEST(StrictParseTest, NoncharactersAreRefused) {
  for (const char* text : {"\"\\uffff\"", "\"\\ufdd0\"", "\"\xEF\xBF\xBE\"",
                           "\"\\udbff\\udfff\"" /* U+10FFFF */, "{\"\\ufffe\":1}"}) {
    const Refusal refusal = RefusalOf(text);
    EXPECT_EQ(refusal.kind, ParseErrorKind::kNoncharacter) << text;
  }
  EXPECT_EQ(RefusalOf(R"({"a":["\uffff"]})").path, "/a/0");
  EXPECT_TRUE(ParseStrict("\"\\ufdcf\\ufdf0\\ufffd\"").ok());
}

TEST(StrictParseTest, DepthIsLimited) {
  ParseOptions options;
  options.max_depth = 64;
  EXPECT_TRUE(ParseStrict(std::string(64, '[') + std::string(64, ']'), options).ok());
  const Refusal refusal = RefusalOf(std::string(65, '[') + std::string(65, ']'), options);
  EXPECT_EQ(refusal.kind, ParseErrorKind::kTooDeep);
  EXPECT_FALSE(IsMalformed(refusal.kind));
  // A hostile depth fails fast and without exhausting the stack.
  EXPECT_EQ(RefusalOf(std::string(1'000'000, '[')).kind, ParseErrorKind::kTooDeep);
  EXPECT_EQ(RefusalOf(R"({"a":{"b":[{}]}})", ParseOptions{.max_depth = 3}).path, "/a/b/0");
}

TEST(StrictParseTest, SizeIsLimited) {
  const Refusal refusal = RefusalOf("[1, 2]", ParseOptions{.max_depth = 64, .max_bytes = 5});
  EXPECT_EQ(refusal.kind, ParseErrorKind::kTooLarge);
  EXPECT_EQ(refusal.code, absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(ParseStrict("[1,2]", ParseOptions{.max_depth = 64, .max_bytes = 5}).ok());
}

TEST(StrictParseTest, KindNamesAreStable) {
  EXPECT_EQ(ParseErrorKindName(ParseErrorKind::kDuplicateKey), "duplicate_key");
  EXPECT_EQ(ParseErrorKindName(ParseErrorKind::kSyntax), "syntax");
  EXPECT_FALSE(ParseErrorKindOf(absl::InvalidArgumentError("x")).has_value());
  EXPECT_FALSE(ParseErrorKindOf(absl::OkStatus()).has_value());
}

}  // namespace
}  // namespace portcullis::json
