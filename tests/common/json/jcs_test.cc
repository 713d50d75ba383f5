#include "common/json/jcs.h"
#include "common/json/jcs_vectors.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "gtest/gtest.h"
#include "tests/support/shared_testdata.h"

namespace portcullis::json {
namespace {

const std::string kVectorsPath = std::string(PORTCULLIS_SHARED_TESTDATA_DIR) + "/jcs/vectors.json";

// Runs every case of the shared RFC 8785 vectors (jcs_vectors.h, the runner `portcullis
// conformance jcs` uses too) and prints "N passed, M failed" for them.
TEST(JcsSharedVectorsTest, AllVectors) {
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(text, kVectorsPath);
  testing::VectorTally tally;
  const absl::Status run = RunJcsVectors(
      text, [&](bool ok, const std::string& what) { tally.Check(ok, what); }, std::cout);
  EXPECT_TRUE(run.ok()) << run;
  tally.Report("jcs");
  EXPECT_EQ(tally.failed(), 0);
  EXPECT_GT(tally.passed(), 0);
}

TEST(JcsTest, SortsMembersByUtf16CodeUnits) {
  // U+10000 (surrogates D800 DC00) sorts before U+FB33 in UTF-16, after it in code points.
  EXPECT_EQ(*CanonicalizeText("{\"\\ufb33\":1,\"\\ud800\\udc00\":2,\"a\":3}"),
            "{\"a\":3,\"\xF0\x90\x80\x80\":2,\"\xEF\xAC\xB3\":1}");
  EXPECT_EQ(*CanonicalizeText("{\"b\":[],\"a\":{\"d\":1,\"c\":2}}"),
            "{\"a\":{\"c\":2,\"d\":1},\"b\":[]}");
}

TEST(JcsTest, ReorderedAndReformattedDocumentsHashAlike) {
  const absl::StatusOr<std::string> a =
      CanonicalizeText("{ \"id\": \"x\", \"n\": 4.50, \"tags\": [ \"a\" ] }");
  const absl::StatusOr<std::string> b =
      CanonicalizeText("{\"tags\":[\"a\"],\"n\":45e-1,\"id\":\"x\"}");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(ContentHash(*a), ContentHash(*b));
  EXPECT_NE(ContentHash(*a),
            ContentHash(*CanonicalizeText("{\"id\":\"y\",\"n\":4.5,\"tags\":[\"a\"]}")));
}

TEST(JcsTest, EscapesOnlyWhatJcsRequires) {
  EXPECT_EQ(*CanonicalizeText(R"("\u0000\u001f\b\f\n\r\t\"\\\/\u007f\u00e9")"),
            "\"\\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\x7f\xC3\xA9\"");
}

TEST(JcsTest, EscapesBetweenLongRunsKeepEveryCharacter) {
  const std::string run(300, 'x');
  EXPECT_EQ(*CanonicalizeText("\"" + run + "\\n" + run + "\\\"\""),
            "\"" + run + "\\n" + run + "\\\"\"");
  EXPECT_EQ(*CanonicalizeText(R"("\u0001")"), R"("\u0001")");
  EXPECT_EQ(*CanonicalizeText(R"("ab\tcd")"), R"("ab\tcd")");
}

TEST(JcsTest, SortsAsciiNamesByTheirBytes) {
  EXPECT_EQ(*CanonicalizeText(R"({"b":1,"B":2,"a":3,"aa":4,"_":5,"1":6})"),
            R"({"1":6,"B":2,"_":5,"a":3,"aa":4,"b":1})");
}

TEST(JcsTest, NumbersInEcmaScriptForm) {
  EXPECT_EQ(*FormatNumber(1), "1");
  EXPECT_EQ(*FormatNumber(-1.5), "-1.5");
  EXPECT_EQ(*FormatNumber(1e21), "1e+21");
  EXPECT_EQ(*FormatNumber(1e20), "100000000000000000000");
  EXPECT_EQ(*FormatNumber(123e18), "123000000000000000000");
  EXPECT_EQ(*FormatNumber(1.5e21), "1.5e+21");
  EXPECT_EQ(*FormatNumber(1e-6), "0.000001");
  EXPECT_EQ(*FormatNumber(1e-7), "1e-7");
  EXPECT_EQ(*FormatNumber(1.25e-7), "1.25e-7");
  EXPECT_EQ(*FormatNumber(0.1), "0.1");
  EXPECT_EQ(*FormatNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(*FormatNumber(-0.0), "0");
  EXPECT_FALSE(FormatNumber(std::numeric_limits<double>::quiet_NaN()).ok());
  EXPECT_FALSE(FormatNumber(-std::numeric_limits<double>::infinity()).ok());
  EXPECT_EQ(*CanonicalizeText("[0, 0.0, 1E2, 1.0e-2, 10, 2.5e+1]"), "[0,0,100,0.01,10,25]");
}

TEST(JcsTest, HandBuiltValues) {
  boost::json::object object;
  object["z"] = int64_t{-42};
  object["a"] = uint64_t{9007199254740992};
  object["m"] = boost::json::array{nullptr, true, 0.5};
  EXPECT_EQ(*Canonicalize(object), "{\"a\":9007199254740992,\"m\":[null,true,0.5],\"z\":-42}");

  EXPECT_FALSE(Canonicalize(boost::json::value(int64_t{9007199254740993})).ok());
  EXPECT_FALSE(Canonicalize(boost::json::value(uint64_t{18446744073709551615u})).ok());
  EXPECT_FALSE(Canonicalize(boost::json::value(std::numeric_limits<double>::infinity())).ok());
  EXPECT_FALSE(Canonicalize(boost::json::value("\xff")).ok());
  boost::json::object bad_key;
  bad_key["\xc0\x80"] = 1.0;
  EXPECT_FALSE(Canonicalize(bad_key).ok());
}

TEST(JcsTest, RefusalsKeepTheirKind) {
  const absl::StatusOr<std::string> duplicate = CanonicalizeText("{\"a\":{\"b\":1,\"b\":2}}");
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(ParseErrorKindOf(duplicate.status()), ParseErrorKind::kDuplicateKey);
  EXPECT_EQ(ParseErrorPathOf(duplicate.status()), "/a/b");
  const absl::StatusOr<std::string> not_json = CanonicalizeText("{");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(ParseErrorKindOf(not_json.status()), ParseErrorKind::kSyntax);
}

TEST(JcsTest, ContentHashIsSha256OfTheCanonicalBytes) {
  EXPECT_EQ(crypto::ToHex(ContentHash("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace portcullis::json
