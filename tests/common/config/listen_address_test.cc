#include "common/config/listen_address.h"

#include "gtest/gtest.h"

namespace portcullis::config {
namespace {

TEST(ParseHostPortTest, AcceptsIpv4NamesAndBracketedIpv6) {
  auto v4 = ParseHostPort("127.0.0.1:8080", false);
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  EXPECT_EQ(v4->ToString(), "127.0.0.1:8080");

  auto v6 = ParseHostPort("[::1]:443", false);
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->ToString(), "[::1]:443");

  EXPECT_TRUE(ParseHostPort("verifier:50051", false).ok());
}

TEST(ParseHostPortTest, PortZeroOnlyWhenAllowed) {
  EXPECT_TRUE(ParseHostPort("127.0.0.1:0", true).ok());
  EXPECT_FALSE(ParseHostPort("127.0.0.1:0", false).ok());
}

TEST(ParseHostPortTest, RejectsMalformed) {
  for (const char* bad : {"", "127.0.0.1", ":80", "host:", "host:65536", "host:-1", "host:8o",
                          "::1:80", "[::1]80", "[::1"}) {
    EXPECT_FALSE(ParseHostPort(bad, true).ok()) << bad;
  }
}

TEST(ParsePositiveDurationTest, AcceptsPositiveRejectsRest) {
  EXPECT_EQ(*ParsePositiveDuration("t", "250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParsePositiveDuration("t", "1m30s"), absl::Seconds(90));
  for (const char* bad : {"0s", "-1s", "5", "soon", "inf", ""}) {
    auto parsed = ParsePositiveDuration("read_timeout", bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("read_timeout"), absl::string_view::npos);
  }
}

}  // namespace
}  // namespace portcullis::config
