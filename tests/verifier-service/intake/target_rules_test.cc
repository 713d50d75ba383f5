#include "verifier-service/src/intake/target_rules.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::intake {
namespace {

const url::TrackingParameters kTracking = url::TrackingParameters::Default();

TEST(VerifierTargetRulesTest, SiteDomainIsTheSerializedHost) {
  EXPECT_EQ(*ParseSiteDomain("Blog.Example"), "blog.example");
  EXPECT_EQ(*ParseSiteDomain("bücher.example"), "xn--bcher-kva.example");
  EXPECT_EQ(*ParseSiteDomain("127.1"), "127.0.0.1");
  EXPECT_EQ(*ParseSiteDomain("[::1]"), "[::1]");
  EXPECT_EQ(*ParseSiteDomain("localhost"), "localhost");
}

TEST(VerifierTargetRulesTest, SiteDomainRefusesAnythingButAHost) {
  for (const char* bad :
       {"", "https://blog.example", "blog.example:443", "blog.example/", "blog.example?x",
        "blog.example#x", "u@blog.example", "blog .example", "blog.example\t", "[::1]:443",
        "a%2eexample", "exa mple", "xn--a.example.0x", "blog..example:"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ParseSiteDomain(bad).status())) << bad;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(ParseSiteDomain(std::string(254, 'a')).status()));
}

TEST(VerifierTargetRulesTest, ExactRuleIsTheNormalizedUrl) {
  const absl::StatusOr<TargetRule> rule = ParseTargetRule(
      "HTTPS://Blog.Example:443/post?utm_source=feed&id=7#comments", TargetKind::kExact, kTracking);
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->url, "https://blog.example/post?id=7");
  EXPECT_EQ(rule->domain, "blog.example");
  EXPECT_EQ(rule->kind, TargetKind::kExact);
  EXPECT_EQ(ParseTargetRule("https://blog.example", TargetKind::kExact, kTracking)->url,
            "https://blog.example/");
  EXPECT_EQ(ParseTargetRule("http://blog.example:8080/a/", TargetKind::kExact, kTracking)->url,
            "http://blog.example:8080/a/");
}

TEST(VerifierTargetRulesTest, PrefixRuleIsADirectoryWithoutQueryOrFragment) {
  const absl::StatusOr<TargetRule> rule =
      ParseTargetRule("https://Blog.example/posts/", TargetKind::kPrefix, kTracking);
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->url, "https://blog.example/posts/");
  EXPECT_EQ(rule->kind, TargetKind::kPrefix);
  EXPECT_EQ(ParseTargetRule("https://blog.example", TargetKind::kPrefix, kTracking)->url,
            "https://blog.example/");
  for (const char* bad : {"https://blog.example/posts", "https://blog.example/posts/?a=1",
                          "https://blog.example/posts/#x", "https://blog.example/posts/?"}) {
    EXPECT_TRUE(
        absl::IsInvalidArgument(ParseTargetRule(bad, TargetKind::kPrefix, kTracking).status()))
        << bad;
  }
}

TEST(VerifierTargetRulesTest, TargetUrlFollowsTheSubmissionRules) {
  for (const char* bad : {"", "ftp://blog.example/", "https://u:p@blog.example/", "/relative",
                          "https://blog.example/a b", "https://"}) {
    EXPECT_TRUE(
        absl::IsInvalidArgument(ParseTargetRule(bad, TargetKind::kExact, kTracking).status()))
        << bad;
  }
  EXPECT_TRUE(
      absl::IsInvalidArgument(ParseTargetRule("https://blog.example/" + std::string(2048, 'a'),
                                              TargetKind::kExact, kTracking)
                                  .status()));
}

}  // namespace
}  // namespace portcullis::verifier::intake
