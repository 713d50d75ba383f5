// 429 + Retry-After from the real gateway, per client address and per source host.
#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

class RateLimitTest : public StackTest {
 protected:
  RateLimitTest() { start_stack_ = false; }

  void StartWith(const std::vector<std::string>& gateway_args) {
    ASSERT_TRUE(stack_->StartVerifier().ok());
    ASSERT_TRUE(stack_->StartGateway(gateway_args).ok());
    ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
    ASSERT_TRUE(stack_->ServeTarget("https://bob.example/*").ok());
  }
};

TEST_F(RateLimitTest, ClientAddressOverItsRateGets429AndRetryAfter) {
  StartWith({"--client_rate_limit=6/m", "--client_burst=3"});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(
        stack_
            ->PostWebmention(absl::StrCat("https://a", i, ".example/"), "https://bob.example/post")
            .status,
        202)
        << i;
  }
  const testing::HttpResult limited =
      stack_->PostWebmention("https://a9.example/", "https://bob.example/post");
  EXPECT_EQ(limited.status, 429) << limited.body;
  const int retry_after =
      std::stoi(limited.Header("retry-after").empty() ? "0" : limited.Header("retry-after"));
  EXPECT_GE(retry_after, 1);
  EXPECT_LE(retry_after, 10);  // One token per 10 s.
  EXPECT_EQ(boost::json::parse(limited.body).at("error").as_string(), "rate_limited");
  // The status page counts too, and the refused submission stored nothing.
  EXPECT_EQ(stack_->Get("/webmention/status/6f1c1b7e-1d5e-4f5e-8a47-0c0ffee00000").status, 429);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 3);
  // Probes are never limited.
  EXPECT_EQ(stack_->Get("/readyz").status, 200);
}

TEST_F(RateLimitTest, SourceHostOverItsRateGets429) {
  StartWith({"--source_host_rate_limit=1/h", "--source_host_burst=2"});
  EXPECT_EQ(stack_->PostWebmention("https://spam.example/1", "https://bob.example/a").status, 202);
  EXPECT_EQ(stack_->PostWebmention("https://spam.example/2", "https://bob.example/b").status, 202);
  const testing::HttpResult limited =
      stack_->PostWebmention("https://SPAM.example:443/3", "https://bob.example/c");
  EXPECT_EQ(limited.status, 429) << limited.body;
  EXPECT_GE(std::stoi(limited.Header("retry-after").empty() ? "0" : limited.Header("retry-after")),
            1700);  // One token per hour, minus the seconds since the burst.
  EXPECT_EQ(stack_->PostWebmention("https://ham.example/1", "https://bob.example/a").status, 202);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 3);
}

TEST_F(RateLimitTest, BehindATrustedProxyTheForwardedClientIsLimited) {
  StartWith({"--trusted_proxies=127.0.0.1/32", "--client_rate_limit=1/h", "--client_burst=1"});
  const auto post = [this](const std::string& client, int n) {
    return testing::SendHttp(stack_->http_port(), "POST", "/webmention",
                             absl::StrCat("source=https%3A%2F%2Fa", n,
                                          ".example%2F&target=https%3A%2F%2Fbob.example%2F"),
                             "application/x-www-form-urlencoded", absl::Seconds(10),
                             {{"X-Forwarded-For", client}});
  };
  EXPECT_EQ(post("198.51.100.1", 1).status, 202);
  EXPECT_EQ(post("198.51.100.1", 2).status, 429);
  EXPECT_EQ(post("198.51.100.2", 3).status, 202);
  // A client cannot escape by writing its own X-Forwarded-For entries in front.
  EXPECT_EQ(post("203.0.113.99, 198.51.100.1", 4).status, 429);
}

}  // namespace
}  // namespace portcullis::integration
