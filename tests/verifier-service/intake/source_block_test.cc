#include "verifier-service/src/intake/source_block.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::intake {
namespace {

using ::testing::ElementsAre;

TEST(VerifierSourceBlockTest, DomainIsStoredAsTheSerializedHost) {
  EXPECT_EQ(*NormalizeBlockValue(BlockKind::kDomain, "Evil.Example"), "evil.example");
  EXPECT_EQ(*NormalizeBlockValue(BlockKind::kDomain, "*.evil.example"), "evil.example");
  EXPECT_EQ(*NormalizeBlockValue(BlockKind::kDomain, ".evil.example."), "evil.example");
  EXPECT_EQ(*NormalizeBlockValue(BlockKind::kDomain, "BÜCHER.example"), "xn--bcher-kva.example");
  EXPECT_EQ(*NormalizeBlockValue(BlockKind::kDomain, "[0:0::1]"), "[::1]");
}

TEST(VerifierSourceBlockTest, DomainThatIsAUrlOrEmptyIsRefused) {
  for (const char* bad : {"", "https://evil.example/", "evil.example/path", "evil example",
                          "user@evil.example", "*."}) {
    absl::StatusOr<std::string> value = NormalizeBlockValue(BlockKind::kDomain, bad);
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(NormalizeBlockValue(BlockKind::kDomain, std::string(3000, 'a')).ok());
}

TEST(VerifierSourceBlockTest, PrefixIsNormalizedLikeASource) {
  EXPECT_EQ(*NormalizeBlockValue(BlockKind::kPrefix, "HTTPS://Spam.Example:443/u/x?utm_source=a"),
            "https://spam.example/u/x");
  EXPECT_FALSE(NormalizeBlockValue(BlockKind::kPrefix, "spam.example/u/").ok());
  EXPECT_FALSE(NormalizeBlockValue(BlockKind::kPrefix, "ftp://spam.example/").ok());
  EXPECT_FALSE(NormalizeBlockValue(BlockKind::kPrefix, "https://u:p@spam.example/").ok());
}

TEST(VerifierSourceBlockTest, DomainKeysRemoveWholeLabelsOnly) {
  EXPECT_THAT(DomainBlockKeys("a.evil.example"),
              ElementsAre("a.evil.example", "evil.example", "example"));
  // notevil.example never yields evil.example: the label boundary.
  EXPECT_THAT(DomainBlockKeys("notevil.example"), ElementsAre("notevil.example", "example"));
  EXPECT_THAT(DomainBlockKeys("192.0.2.1"), ElementsAre("192.0.2.1"));
  EXPECT_THAT(DomainBlockKeys("[::1]"), ElementsAre("[::1]"));
  EXPECT_TRUE(DomainBlockKeys("").empty());
}

TEST(VerifierSourceBlockTest, HostOfSerializedUrl) {
  EXPECT_EQ(HostOfSerializedUrl("https://a.example/x"), "a.example");
  EXPECT_EQ(HostOfSerializedUrl("http://a.example:8080/x"), "a.example");
  EXPECT_EQ(HostOfSerializedUrl("http://[::1]:8080/x"), "[::1]");
  EXPECT_EQ(HostOfSerializedUrl("https://a.example?q"), "a.example");
  EXPECT_EQ(HostOfSerializedUrl("nothing"), "");
}

}  // namespace
}  // namespace portcullis::verifier::intake
