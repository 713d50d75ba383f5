#include "verifier-service/src/verification/author_cache.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::verification {
namespace {

class VerifierAuthorCacheTest : public ::testing::Test {
 protected:
  AuthorCache::Clock clock() {
    return [this] { return now_; };
  }
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
};

TEST_F(VerifierAuthorCacheTest, RemembersACardUntilItsTtlPasses) {
  AuthorCache cache(8, absl::Minutes(10), clock());
  cache.Put("https://alice.example/", AuthorCard{"Alice", "https://alice.example/", "", ""});
  now_ += absl::Minutes(9);
  ASSERT_TRUE(cache.Get("https://alice.example/").has_value());
  EXPECT_EQ(cache.Get("https://alice.example/")->name, "Alice");
  now_ += absl::Minutes(1);
  EXPECT_FALSE(cache.Get("https://alice.example/").has_value());
  EXPECT_FALSE(cache.Get("https://bob.example/").has_value());
}

TEST_F(VerifierAuthorCacheTest, AReplacedCardIsTheNewOne) {
  AuthorCache cache(8, absl::Minutes(10), clock());
  cache.Put("https://alice.example/", AuthorCard{"Alice", "", "", ""});
  cache.Put("https://alice.example/", AuthorCard{"Alice B.", "", "", ""});
  EXPECT_EQ(cache.Get("https://alice.example/")->name, "Alice B.");
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(VerifierAuthorCacheTest, NeverHoldsMoreThanItsBoundAndDropsTheOldestFirst) {
  AuthorCache cache(3, absl::Minutes(10), clock());
  for (int i = 0; i < 10; ++i) {
    cache.Put("https://a" + std::to_string(i) + ".example/", AuthorCard{std::to_string(i)});
    now_ += absl::Seconds(1);
    EXPECT_LE(cache.size(), 3u);
  }
  EXPECT_FALSE(cache.Get("https://a6.example/").has_value());
  EXPECT_TRUE(cache.Get("https://a7.example/").has_value());
  EXPECT_TRUE(cache.Get("https://a9.example/").has_value());
}

TEST_F(VerifierAuthorCacheTest, ExpiredEntriesMakeRoomBeforeLiveOnes) {
  AuthorCache cache(2, absl::Minutes(10), clock());
  cache.Put("https://old.example/", AuthorCard{"old"});
  now_ += absl::Minutes(5);
  cache.Put("https://live.example/", AuthorCard{"live"});
  now_ += absl::Minutes(6);  // old expired, live has 4 minutes left.
  cache.Put("https://new.example/", AuthorCard{"new"});
  EXPECT_TRUE(cache.Get("https://live.example/").has_value());
  EXPECT_TRUE(cache.Get("https://new.example/").has_value());
}

TEST_F(VerifierAuthorCacheTest, ManyReplacementsOfOneKeyKeepItsBookkeepingBounded) {
  AuthorCache cache(2, absl::Minutes(10), clock());
  for (int i = 0; i < 1000; ++i) {
    cache.Put("https://alice.example/", AuthorCard{std::to_string(i)});
  }
  cache.Put("https://bob.example/", AuthorCard{"bob"});
  cache.Put("https://carol.example/", AuthorCard{"carol"});
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.Get("https://alice.example/").has_value());
}

TEST_F(VerifierAuthorCacheTest, AZeroSizedCacheKeepsNothing) {
  AuthorCache cache(0, absl::Minutes(10), clock());
  cache.Put("https://alice.example/", AuthorCard{"Alice"});
  EXPECT_FALSE(cache.Get("https://alice.example/").has_value());
}

}  // namespace
}  // namespace portcullis::verifier::verification
