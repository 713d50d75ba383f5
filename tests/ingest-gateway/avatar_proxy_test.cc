// GET /avatar/{hash} (issue 17) against a fake verifier: hash validation before any call, the
// answer's headers, 304, the cache, and the failures through the answer table.
#include "ingest-gateway/src/avatar_proxy.h"

#include <memory>
#include <optional>
#include <string>

#include "common/crypto/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/rate_limiter.h"
#include "tests/ingest-gateway/fake_verifier_client.h"

namespace portcullis::gateway {
namespace {

namespace v1 = verifier::v1;
using ::testing::HasSubstr;

const std::string kHash(64, 'b');

v1::FetchAvatarResponse Png() {
  v1::FetchAvatarResponse response;
  response.set_body("\x89PNG\r\n");
  response.set_content_type("image/png");
  response.set_etag("\"origin\"");
  return response;
}

class GatewayAvatarProxyTest : public ::testing::Test {
 protected:
  http::HttpResponse Get(absl::string_view hash, absl::string_view if_none_match = "") {
    http::HttpRequest request;
    request.method = "GET";
    request.path = std::string(kAvatarPathPrefix) + std::string(hash);
    request.path_param = std::string(hash);
    request.request_id = "test-id";
    request.client_address = "192.0.2.1:1234";
    if (!if_none_match.empty()) {
      request.headers.Add("If-None-Match", if_none_match);
    }
    std::optional<http::HttpResponse> got;
    proxy_.Handle(request, [&](http::HttpResponse response) { got = std::move(response); });
    EXPECT_TRUE(got.has_value());
    return got.value_or(http::HttpResponse{});
  }

  absl::Time now_ = absl::FromUnixSeconds(1700000000);
  testing::FakeVerifierClient verifier_;
  std::shared_ptr<AvatarCache> cache_ = std::make_shared<AvatarCache>(
      AvatarCacheLimits{.max_entries = 8, .max_bytes = 1024, .ttl = absl::Minutes(5)});
  AvatarProxy proxy_{verifier_, cache_, 7, RateLimits{.now = [this] { return now_; }}};
};

TEST(GatewayAvatarHashTest, HashesAndMediaTypes) {
  EXPECT_TRUE(crypto::IsSha256Hex(kHash));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(64, 'B')));
  EXPECT_FALSE(crypto::IsSha256Hex(std::string(63, 'b')));
  EXPECT_FALSE(crypto::IsSha256Hex(kHash + "/x"));
  EXPECT_TRUE(IsAvatarMediaType("image/avif"));
  EXPECT_FALSE(IsAvatarMediaType("image/svg+xml"));
  EXPECT_FALSE(IsAvatarMediaType("text/html"));
  v1::Author author;
  author.set_photo("https://alice.example/a.jpg");
  EXPECT_EQ(ProxiedPhotoUrl(author, "https://m.example"), "");
  author.set_photo_proxy_hash(kHash);
  EXPECT_EQ(ProxiedPhotoUrl(author, "https://m.example"), "https://m.example/avatar/" + kHash);
  EXPECT_EQ(ProxiedPhotoUrl(author, ""), "/avatar/" + kHash);
}

TEST_F(GatewayAvatarProxyTest, MalformedHashesAre404WithoutACall) {
  for (const std::string& hash :
       {std::string(""), std::string("abc"), std::string(64, 'Z'),
        std::string("..%2F..%2Fetc%2Fpasswd")}) {
    const http::HttpResponse response = Get(hash);
    EXPECT_EQ(response.status, 404) << hash;
  }
  EXPECT_TRUE(verifier_.avatar_requests.empty());
}

TEST_F(GatewayAvatarProxyTest, ServesTheImageWithSafeHeadersAndCachesIt) {
  verifier_.avatar_result = Png();
  const http::HttpResponse first = Get(kHash);
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "\x89PNG\r\n");
  EXPECT_EQ(first.headers.Get("Content-Type"), "image/png");
  EXPECT_EQ(first.headers.Get("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(first.headers.Get("Cache-Control"), "public, max-age=86400");
  EXPECT_THAT(std::string(first.headers.Get("Content-Security-Policy").value_or("")),
              HasSubstr("default-src 'none'"));
  const std::string etag(first.headers.Get("ETag").value_or(""));
  EXPECT_FALSE(etag.empty());
  ASSERT_EQ(verifier_.avatar_requests.size(), 1u);
  EXPECT_EQ(verifier_.avatar_requests[0].hash(), kHash);

  verifier_.avatar_result = absl::UnavailableError("must not be asked again");
  const http::HttpResponse second = Get(kHash);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.body, first.body);
  const http::HttpResponse not_modified = Get(kHash, etag);
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_TRUE(not_modified.body.empty());
  EXPECT_EQ(verifier_.avatar_requests.size(), 1u) << "served from the cache";

  now_ += absl::Minutes(5);
  EXPECT_EQ(Get(kHash).status, 503) << "past the TTL the verifier is asked again";
  EXPECT_EQ(verifier_.avatar_requests.size(), 2u);
}

TEST_F(GatewayAvatarProxyTest, FailuresAreAnsweredThroughTheTable) {
  verifier_.avatar_result = absl::NotFoundError("unknown hash");
  EXPECT_EQ(Get(kHash).status, 404);
  verifier_.avatar_result = absl::FailedPreconditionError("avatar not served: too_large");
  const http::HttpResponse refused = Get(kHash);
  EXPECT_EQ(refused.status, 502);
  EXPECT_THAT(refused.body, HasSubstr("bad_gateway"));
  EXPECT_THAT(refused.body, ::testing::Not(HasSubstr("too_large")));
  verifier_.avatar_result = absl::UnavailableError("down");
  const http::HttpResponse unavailable = Get(kHash);
  EXPECT_EQ(unavailable.status, 503);
  EXPECT_EQ(unavailable.headers.Get("Retry-After"), "7");
  v1::FetchAvatarResponse svg = Png();
  svg.set_content_type("image/svg+xml");
  verifier_.avatar_result = svg;
  EXPECT_EQ(Get(kHash).status, 502) << "the gateway checks the type again";
  EXPECT_EQ(cache_->entries(), 0u) << "no failure is cached";
}

TEST_F(GatewayAvatarProxyTest, OnlyCacheMissesCountAgainstTheClientsRate) {
  RateLimiter limiter({.tokens_per_second = 0.001, .burst = 1}, 100);
  AvatarProxy limited(verifier_, cache_, 7,
                      RateLimits{.per_client = &limiter, .now = [this] { return now_; }});
  verifier_.avatar_result = Png();
  const auto get = [&](const std::string& hash) {
    http::HttpRequest request;
    request.path_param = hash;
    request.client_address = "192.0.2.1:1234";
    std::optional<http::HttpResponse> got;
    limited.Handle(request, [&](http::HttpResponse response) { got = std::move(response); });
    return got.value_or(http::HttpResponse{}).status;
  };
  EXPECT_EQ(get(kHash), 200);
  EXPECT_EQ(get(kHash), 200) << "a cache hit costs nothing";
  EXPECT_EQ(get(std::string(64, 'd')), 429);
}

}  // namespace
}  // namespace portcullis::gateway
