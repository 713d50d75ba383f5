// AvatarCache (issue 17): bounded by entries, by bytes and by age; least recently used go first.
#include "ingest-gateway/src/avatar_cache.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

CachedAvatar Image(size_t bytes, absl::string_view type = "image/png") {
  return CachedAvatar{std::string(bytes, 'x'), std::string(type), "\"etag\""};
}

TEST(GatewayAvatarCacheTest, ServesWhatWasStoredUntilItsTtl) {
  AvatarCache cache({.max_entries = 4, .max_bytes = 1000, .ttl = absl::Minutes(10)});
  EXPECT_EQ(cache.Get("a", kT0), nullptr);
  cache.Put("a", Image(10, "image/gif"), kT0);
  std::shared_ptr<const CachedAvatar> got = cache.Get("a", kT0 + absl::Minutes(9));
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->body.size(), 10u);
  EXPECT_EQ(got->content_type, "image/gif");
  EXPECT_EQ(cache.Get("a", kT0 + absl::Minutes(10)), nullptr) << "expired at its TTL";
  EXPECT_EQ(cache.entries(), 0u) << "an expired entry is dropped";
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(GatewayAvatarCacheTest, KeepsAtMostItsEntriesDroppingTheLeastRecentlyUsed) {
  AvatarCache cache({.max_entries = 2, .max_bytes = 1000, .ttl = absl::Hours(1)});
  cache.Put("a", Image(1), kT0);
  cache.Put("b", Image(1), kT0);
  ASSERT_NE(cache.Get("a", kT0), nullptr);  // a is now more recent than b
  cache.Put("c", Image(1), kT0);
  EXPECT_EQ(cache.entries(), 2u);
  EXPECT_NE(cache.Get("a", kT0), nullptr);
  EXPECT_EQ(cache.Get("b", kT0), nullptr);
  EXPECT_NE(cache.Get("c", kT0), nullptr);
}

TEST(GatewayAvatarCacheTest, KeepsAtMostItsBytes) {
  AvatarCache cache({.max_entries = 100, .max_bytes = 100, .ttl = absl::Hours(1)});
  cache.Put("a", Image(40), kT0);
  cache.Put("b", Image(40), kT0);
  cache.Put("c", Image(40), kT0);  // 120 > 100: a goes
  EXPECT_EQ(cache.bytes(), 80u);
  EXPECT_EQ(cache.Get("a", kT0), nullptr);
  cache.Put("huge", Image(101), kT0);
  EXPECT_EQ(cache.Get("huge", kT0), nullptr) << "larger than the whole cache: not kept";
  EXPECT_EQ(cache.bytes(), 80u) << "and nothing was evicted for it";
  cache.Put("b", Image(10), kT0);  // replacing counts the new size only
  EXPECT_EQ(cache.bytes(), 50u);
  EXPECT_EQ(cache.entries(), 2u);
}

TEST(GatewayAvatarCacheTest, ZeroEntriesKeepsNothing) {
  AvatarCache cache({.max_entries = 0, .max_bytes = 100, .ttl = absl::Hours(1)});
  cache.Put("a", Image(1), kT0);
  EXPECT_EQ(cache.Get("a", kT0), nullptr);
  EXPECT_EQ(cache.entries(), 0u);
}

}  // namespace
}  // namespace portcullis::gateway
