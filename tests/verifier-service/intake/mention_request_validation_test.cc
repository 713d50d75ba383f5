#include "verifier-service/src/intake/mention_request_validation.h"

#include <string>
#include <variant>

#include "gtest/gtest.h"

namespace portcullis::verifier::intake {
namespace {

using portcullis::verifier::v1::SubmitMentionRequest;

SubmitMentionRequest Request(std::string source, std::string target) {
  SubmitMentionRequest request;
  request.set_source(std::move(source));
  request.set_target(std::move(target));
  return request;
}

// The reason code for the pair, or "" when accepted.
std::string ReasonFor(const std::string& source, const std::string& target) {
  const SubmitMentionValidation result = Validate(Request(source, target), url::TrackingParameters::Default());
  if (const auto* rejection = std::get_if<Rejection>(&result)) {
    EXPECT_FALSE(rejection->description.empty());
    return rejection->reason;
  }
  return "";
}

// The normalized form of `url` (validated as a source against an unrelated target).
std::string Normalized(const std::string& url) {
  const SubmitMentionValidation result = Validate(Request(url, "https://unrelated.example/x"), url::TrackingParameters::Default());
  const auto* accepted = std::get_if<NormalizedMention>(&result);
  if (accepted == nullptr) {
    ADD_FAILURE() << url << " rejected: " << std::get<Rejection>(result).reason;
    return "";
  }
  return accepted->key.normalized_source;
}

constexpr char kGood[] = "https://target.example/post/1";

struct ReasonCase {
  std::string source;
  std::string target;
  std::string reason;
};

class VerifierMentionValidationReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(VerifierMentionValidationReasonTest, GivesReason) {
  EXPECT_EQ(ReasonFor(GetParam().source, GetParam().target), GetParam().reason)
      << GetParam().source << " -> " << GetParam().target;
}

INSTANTIATE_TEST_SUITE_P(
    VerifierMentionValidation, VerifierMentionValidationReasonTest,
    ::testing::Values(
        ReasonCase{"https://source.example/a", kGood, ""},
        ReasonCase{"http://source.example", kGood, ""},
        ReasonCase{"HTTPS://Source.Example:8443/a?b=c#d", kGood, ""},
        ReasonCase{"http://[::1]:8080/a", kGood, ""}, ReasonCase{"http://192.0.2.1/", kGood, ""},
        // invalid_source / invalid_target
        ReasonCase{"", kGood, "invalid_source"},
        ReasonCase{"source.example/a", kGood, "invalid_source"},
        ReasonCase{"/relative", kGood, "invalid_source"},
        // Spellings a browser reads as https://source.example/ (WHATWG), so they are accepted.
        ReasonCase{"https:source.example", kGood, ""},
        ReasonCase{"https:/source.example", kGood, ""},
        ReasonCase{"https://", kGood, "invalid_source"},
        ReasonCase{"https:///path", kGood, ""},
        ReasonCase{"https://:80/", kGood, "invalid_source"},
        ReasonCase{"https://source.example:99999/", kGood, "invalid_source"},
        ReasonCase{"https://source.example:8o/", kGood, "invalid_source"},
        ReasonCase{"https://source.example:-1/", kGood, "invalid_source"},
        ReasonCase{"https://sou rce.example/", kGood, "invalid_source"},
        ReasonCase{"https://source.example/a b", kGood, "invalid_source"},
        ReasonCase{"https://source.example/\t", kGood, "invalid_source"},
        ReasonCase{std::string("https://source.example/\x01", 24), kGood, "invalid_source"},
        ReasonCase{"https://source.example/\x7f", kGood, "invalid_source"},
        ReasonCase{" https://source.example/", kGood, "invalid_source"},
        ReasonCase{"https://sour<ce.example/", kGood, "invalid_source"},
        ReasonCase{"https://[::1/", kGood, "invalid_source"},
        ReasonCase{"https://[zz]/", kGood, "invalid_source"},
        ReasonCase{"https://source.example/a", "", "invalid_target"},
        ReasonCase{"https://source.example/a", "target.example", "invalid_target"},
        ReasonCase{"https://source.example/a", "https://", "invalid_target"},
        // unsupported_scheme
        ReasonCase{"ftp://source.example/a", kGood, "unsupported_scheme"},
        ReasonCase{"file:///etc/passwd", kGood, "unsupported_scheme"},
        ReasonCase{"javascript:alert(1)", kGood, "unsupported_scheme"},
        ReasonCase{"mailto:a@source.example", kGood, "unsupported_scheme"},
        ReasonCase{"https://source.example/a", "gopher://target.example/", "unsupported_scheme"},
        // credentials_in_url
        ReasonCase{"https://user:pass@source.example/", kGood, "credentials_in_url"},
        ReasonCase{"https://user@source.example/", kGood, "credentials_in_url"},
        ReasonCase{"https://@source.example/", kGood, ""},
        ReasonCase{"https://source.example/a", "http://u:p@target.example/", "credentials_in_url"},
        // url_too_long
        ReasonCase{"https://source.example/" + std::string(2048, 'a'), kGood, "url_too_long"},
        ReasonCase{"https://source.example/a", "https://t.example/" + std::string(2048, 'a'),
                   "url_too_long"},
        // same_source_and_target
        ReasonCase{kGood, kGood, "same_source_and_target"},
        ReasonCase{"HTTP://Example.COM:80", "http://example.com/", "same_source_and_target"},
        ReasonCase{"https://example.com/a?utm_source=feed", "https://example.com/a",
                   "same_source_and_target"},
        ReasonCase{"https://xn--bcher-kva.example/", "https://b\xC3\xBC" "cher.example/",
                   "same_source_and_target"},
        ReasonCase{"http://2130706433/", "http://127.1/", "same_source_and_target"},
        ReasonCase{"https://example.com/a#one", "https://EXAMPLE.com:443/a#two",
                   "same_source_and_target"}));

TEST(VerifierMentionValidationTest, AcceptsExactly2048Bytes) {
  const std::string prefix = "https://source.example/";
  const std::string url = prefix + std::string(2048 - prefix.size(), 'a');
  ASSERT_EQ(url.size(), 2048u);
  EXPECT_EQ(ReasonFor(url, kGood), "");
}

TEST(VerifierMentionValidationTest, SourceIsCheckedBeforeTarget) {
  EXPECT_EQ(ReasonFor("ftp://a.example/", "bad"), "unsupported_scheme");
  EXPECT_EQ(ReasonFor("bad", "ftp://a.example/"), "invalid_source");
}

TEST(VerifierMentionValidationTest, NormalizesSchemeHostPortFragmentAndPath) {
  EXPECT_EQ(Normalized("HTTP://Example.COM:80"), "http://example.com/");
  EXPECT_EQ(Normalized("https://Example.com:443/Path?Q=1#frag"), "https://example.com/Path?Q=1");
  EXPECT_EQ(Normalized("https://example.com:80/"), "https://example.com:80/");
  EXPECT_EQ(Normalized("http://example.com:0080/a"), "http://example.com/a");
  EXPECT_EQ(Normalized("http://example.com:8080"), "http://example.com:8080/");
  EXPECT_EQ(Normalized("http://example.com?x=1"), "http://example.com/?x=1");
  EXPECT_EQ(Normalized("http://example.com#top"), "http://example.com/");
  EXPECT_EQ(Normalized("http://example.com:/a"), "http://example.com/a");
  EXPECT_EQ(Normalized("http://[::1]:80/a"), "http://[::1]/a");
}

TEST(VerifierMentionValidationTest, AcceptedKeepsBothNormalized) {
  const SubmitMentionValidation result =
      Validate(Request("HTTPS://A.example/x#f", "http://B.example:80"),
               url::TrackingParameters::Default());
  const auto* accepted = std::get_if<NormalizedMention>(&result);
  ASSERT_NE(accepted, nullptr);
  EXPECT_EQ(accepted->key.normalized_source, "https://a.example/x");
  EXPECT_EQ(accepted->key.normalized_target, "http://b.example/");
}

}  // namespace
}  // namespace portcullis::verifier::intake
