#include "ingest-gateway/src/form_decoding.h"

#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::ElementsAre;

struct DecodeCase {
  std::string body;
  std::vector<std::pair<std::string, std::string>> fields;
};

void PrintTo(const DecodeCase& c, std::ostream* os) { *os << ::testing::PrintToString(c.body); }

class GatewayFormDecodingValidTest : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(GatewayFormDecodingValidTest, Decodes) {
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(GetParam().body);
  ASSERT_TRUE(fields.ok()) << fields.status();
  std::vector<std::pair<std::string, std::string>> got;
  for (const FormField& field : *fields) {
    got.emplace_back(field.name, field.value);
  }
  EXPECT_EQ(got, GetParam().fields);
}

INSTANTIATE_TEST_SUITE_P(
    Gateway, GatewayFormDecodingValidTest,
    ::testing::Values(DecodeCase{"", {}}, DecodeCase{"a=1", {{"a", "1"}}},
                      DecodeCase{
                          "source=https%3A%2F%2Fa.example%2Fp&target=https://b.example/",
                          {{"source", "https://a.example/p"}, {"target", "https://b.example/"}}},
                      DecodeCase{"q=a+b%20c", {{"q", "a b c"}}},
                      DecodeCase{"a=1&&b=2&", {{"a", "1"}, {"b", "2"}}},
                      DecodeCase{"flag", {{"flag", ""}}}, DecodeCase{"a=", {{"a", ""}}},
                      DecodeCase{"=v", {{"", "v"}}}, DecodeCase{"a=x=y", {{"a", "x=y"}}},
                      DecodeCase{"a=1&a=2", {{"a", "1"}, {"a", "2"}}},
                      DecodeCase{"n=%C3%A9%e2%82%ac", {{"n", "\xC3\xA9\xE2\x82\xAC"}}},
                      DecodeCase{"e=%F0%9F%98%80", {{"e", "\xF0\x9F\x98\x80"}}}));

class GatewayFormDecodingInvalidTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GatewayFormDecodingInvalidTest, Refuses) {
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm(GetParam());
  EXPECT_EQ(fields.status().code(), absl::StatusCode::kInvalidArgument) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Gateway, GatewayFormDecodingInvalidTest,
                         ::testing::Values("a=%", "a=%4", "a=%zz", "a=%4g", "%=1", "a=1&b=%",
                                           "a=%FF",           // not UTF-8
                                           "a=%C3",           // truncated sequence
                                           "a=%C0%AF",        // overlong
                                           "a=%ED%A0%80",     // surrogate
                                           "a=%F4%90%80%80",  // past U+10FFFF
                                           "a=\xFF"));        // raw invalid byte

TEST(GatewayFormDecodingTest, FieldValuesReportsDuplicates) {
  absl::StatusOr<std::vector<FormField>> fields = DecodeForm("source=a&target=b&source=c");
  ASSERT_TRUE(fields.ok());
  EXPECT_THAT(FieldValues(*fields, "source"), ElementsAre("a", "c"));
  EXPECT_THAT(FieldValues(*fields, "target"), ElementsAre("b"));
  EXPECT_TRUE(FieldValues(*fields, "other").empty());
}


}  // namespace
}  // namespace portcullis::gateway
