#include "ingest-gateway/src/rate_limiter.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1700000000);

TEST(GatewayRateLimiterTest, ParseRate) {
  EXPECT_DOUBLE_EQ(*ParseRate("5/s"), 5);
  EXPECT_DOUBLE_EQ(*ParseRate("60/m"), 1);
  EXPECT_DOUBLE_EQ(*ParseRate("3600/h"), 1);
  EXPECT_DOUBLE_EQ(*ParseRate("0.5/s"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseRate("0"), 0);
  for (const char* bad : {"", "5", "5/d", "-1/s", "0/s", "x/s", "/s", "5/"}) {
    EXPECT_FALSE(ParseRate(bad).ok()) << bad;
  }
}

TEST(GatewayRateLimiterTest, BurstThenSustainedRateWithTheWaitUntilTheNextToken) {
  RateLimiter limiter({/*tokens_per_second=*/0.5, /*burst=*/3}, 100);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.Acquire("a", kStart), absl::ZeroDuration()) << i;
  }
  EXPECT_EQ(limiter.Acquire("a", kStart), absl::Seconds(2));
  EXPECT_EQ(limiter.Acquire("a", kStart + absl::Seconds(1)), absl::Seconds(1));
  EXPECT_EQ(limiter.Acquire("a", kStart + absl::Seconds(2)), absl::ZeroDuration());
  EXPECT_GT(limiter.Acquire("a", kStart + absl::Seconds(2)), absl::ZeroDuration());
  // Another key has its own bucket.
  EXPECT_EQ(limiter.Acquire("b", kStart), absl::ZeroDuration());
  // A long pause refills to the burst, not beyond.
  const absl::Time later = kStart + absl::Hours(1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.Acquire("a", later), absl::ZeroDuration()) << i;
  }
  EXPECT_GT(limiter.Acquire("a", later), absl::ZeroDuration());
}

TEST(GatewayRateLimiterTest, DisabledLimitsNothing) {
  RateLimiter limiter({0, 1}, 10);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(limiter.Acquire("a", kStart), absl::ZeroDuration());
  }
  EXPECT_EQ(limiter.tracked_keys(), 0u);
}

TEST(GatewayRateLimiterTest, MemoryIsBoundedAndBusyKeysAreKeptOverIdleOnes) {
  RateLimiter limiter({1, 2}, 100);
  // A busy sender, over its limit.
  EXPECT_EQ(limiter.Acquire("busy", kStart), absl::ZeroDuration());
  EXPECT_EQ(limiter.Acquire("busy", kStart), absl::ZeroDuration());
  EXPECT_GT(limiter.Acquire("busy", kStart), absl::ZeroDuration());
  // Many one-off senders, long ago enough to have refilled.
  for (int i = 0; i < 1000; ++i) {
    limiter.Acquire(absl::StrCat("once-", i), kStart - absl::Minutes(10) + absl::Milliseconds(i));
  }
  EXPECT_LE(limiter.tracked_keys(), 100u);
  EXPECT_GT(limiter.Acquire("busy", kStart), absl::ZeroDuration()) << "still limited";
}

TEST(GatewayRateLimiterTest, ClientKeyIsTheAddressOrTheIpv6Slash64) {
  EXPECT_EQ(ClientKey("203.0.113.7:54321"), "203.0.113.7");
  EXPECT_EQ(ClientKey("[2001:db8:1:2:aaaa::1]:443"), ClientKey("[2001:db8:1:2:bbbb::9]:80"));
  EXPECT_NE(ClientKey("[2001:db8:1:2::1]:443"), ClientKey("[2001:db8:1:3::1]:443"));
  EXPECT_EQ(ClientKey("[::ffff:203.0.113.7]:1"), "203.0.113.7");
  EXPECT_EQ(ClientKey("unknown"), "unknown");
}

TEST(GatewayRateLimiterTest, ForwardedForCountsOnlyBehindATrustedProxy) {
  const std::vector<net::Cidr> proxies = *net::Cidr::ParseList("10.0.0.0/8, 192.0.2.1");
  // The peer is not a trusted proxy: its own address, whatever the header says.
  EXPECT_EQ(ClientKey("203.0.113.7:1", "198.51.100.1", proxies), "203.0.113.7");
  // Behind a trusted proxy: the address that proxy saw.
  EXPECT_EQ(ClientKey("10.1.2.3:1", "198.51.100.1", proxies), "198.51.100.1");
  // Entries a client wrote itself (left of what the proxies added) are ignored.
  EXPECT_EQ(ClientKey("10.1.2.3:1", "1.2.3.4, 198.51.100.1, 192.0.2.1", proxies), "198.51.100.1");
  EXPECT_EQ(ClientKey("10.1.2.3:1", " 2001:db8::1 ", proxies), "20010db800000000::/64");
  // No header, a malformed entry, or only proxies on the way: the peer.
  EXPECT_EQ(ClientKey("10.1.2.3:1", std::nullopt, proxies), "10.1.2.3");
  EXPECT_EQ(ClientKey("10.1.2.3:1", "1.2.3.4, garbage", proxies), "10.1.2.3");
  EXPECT_EQ(ClientKey("10.1.2.3:1", "10.9.9.9", proxies), "10.1.2.3");
  EXPECT_EQ(ClientKey("10.1.2.3:1", "198.51.100.1", {}), "10.1.2.3");
}

TEST(GatewayRateLimiterTest, SourceHostKeyIsTheParsedHost) {
  EXPECT_EQ(SourceHostKey("HTTPS://Alice.Example:8443/x"), "alice.example");
  EXPECT_EQ(SourceHostKey("https://bücher.example/"), "xn--bcher-kva.example");
  EXPECT_EQ(SourceHostKey("ftp://a.example/"), std::nullopt);
  EXPECT_EQ(SourceHostKey("not a url"), std::nullopt);
}

}  // namespace
}  // namespace portcullis::gateway
