// avatar_rpcs: FetchAvatar's pure half (issue 17): which hashes it takes, the limits of an avatar
// fetch, and how a fetch result becomes its answer. The lookup and the fetch against real
// PostgreSQL and a loopback origin are in tests/integration/avatar_proxy_test.cc.
#include "verifier-service/src/server/avatar_rpcs.h"

#include <string>

#include "common/crypto/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::string kHash(64, 'a');

TEST(VerifierAvatarRpcTest, OnlyA64DigitLowercaseHexHashIsTaken) {
  EXPECT_TRUE(crypto::IsSha256Hex(kHash));
  EXPECT_TRUE(crypto::IsSha256Hex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(crypto::IsSha256Hex(""));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(63, 'a')));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(65, 'a')));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(64, 'A')));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(63, 'a') + "g"));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(63, 'a') + "/"));

  v1::FetchAvatarRequest request;
  EXPECT_EQ(ValidateFetchAvatar(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_hash(kHash);
  ASSERT_TRUE(ValidateFetchAvatar(request).ok());
  EXPECT_EQ(*ValidateFetchAvatar(request), kHash);
}

TEST(VerifierAvatarRpcTest, AnAvatarFetchTakesImagesOnlyWithinItsCaps) {
  const fetch::FetchLimits limits = AvatarFetchLimits();
  EXPECT_EQ(limits.max_body_bytes, 512 * 1024);
  EXPECT_EQ(limits.total_timeout, kAvatarFetchTimeout);
  EXPECT_LE(limits.total_timeout, absl::Seconds(2));  // the gateway's default verifier deadline
  EXPECT_EQ(limits.max_redirects, kMaxAvatarRedirects);
  EXPECT_THAT(limits.media_types,
              ElementsAre("image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"));
}

TEST(VerifierAvatarRpcTest, AnImageIsAnsweredWithItsTypeAndValidators) {
  fetch::FetchResult result;
  result.outcome = fetch::FetchOutcome::kOk;
  result.body = "\x89PNG";
  result.content_type = "Image/PNG; charset=binary";
  result.etag = "\"v1\"";
  v1::FetchAvatarResponse response;
  ASSERT_TRUE(AvatarAnswer(result, &response).ok());
  EXPECT_EQ(response.body(), "\x89PNG");
  EXPECT_EQ(response.content_type(), "image/png");
  EXPECT_EQ(response.etag(), "\"v1\"");
  EXPECT_EQ(response.last_modified(), "");
}

TEST(VerifierAvatarRpcTest, RefusalsAreFailedPreconditionAndTransientFailuresUnavailable) {
  for (const fetch::FetchOutcome outcome :
       {fetch::FetchOutcome::kUnsupportedContentType, fetch::FetchOutcome::kTooLarge,
        fetch::FetchOutcome::kForbiddenAddress, fetch::FetchOutcome::kHttp4xx}) {
    fetch::FetchResult result;
    result.outcome = outcome;
    v1::FetchAvatarResponse response;
    const absl::Status status = AvatarAnswer(result, &response);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr(fetch::FetchOutcomeName(outcome)));
    EXPECT_EQ(response.body(), "");
  }
  for (const fetch::FetchOutcome outcome :
       {fetch::FetchOutcome::kTimeout, fetch::FetchOutcome::kHttp5xx,
        fetch::FetchOutcome::kConnectionFailed, fetch::FetchOutcome::kCancelled}) {
    fetch::FetchResult result;
    result.outcome = outcome;
    v1::FetchAvatarResponse response;
    EXPECT_EQ(AvatarAnswer(result, &response).code(), absl::StatusCode::kUnavailable)
        << fetch::FetchOutcomeName(outcome);
  }
}

}  // namespace
}  // namespace portcullis::verifier::server
