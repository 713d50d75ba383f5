#include "common/net/cidr.h"

#include "gtest/gtest.h"

namespace portcullis::net {
namespace {

IpAddress Ip(absl::string_view text) {
  absl::StatusOr<IpAddress> address = IpAddress::Parse(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.status();
  return address.ok() ? *address : IpAddress::Ipv4(0);
}

Cidr Block(absl::string_view text) {
  absl::StatusOr<Cidr> cidr = Cidr::Parse(text);
  EXPECT_TRUE(cidr.ok()) << text << ": " << cidr.status();
  return cidr.ok() ? *cidr : Cidr::Of(IpAddress::Ipv4(0), 32);
}

TEST(CidrTest, ParseAndFormat) {
  for (const char* text : {"10.0.0.0/8", "0.0.0.0/0", "255.255.255.255/32", "fc00::/7", "::/0",
                           "::1/128", "64:ff9b:1::/48", "2001:db8::/32"}) {
    EXPECT_EQ(Block(text).ToString(), text);
  }
  EXPECT_EQ(Block("168.63.129.16").ToString(), "168.63.129.16/32");
  EXPECT_EQ(Block("fd00:ec2::254").ToString(), "fd00:ec2::254/128");
  EXPECT_EQ(Block("FC00::/7").ToString(), "fc00::/7");
  EXPECT_EQ(Block("10.0.0.0/8").prefix_length(), 8);
  EXPECT_EQ(Block("fc00::/7").family(), IpAddress::Family::kIpv6);
}

TEST(CidrTest, ParseRefuses) {
  for (const char* text : {"", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/08",
                           "10.0.0.0/8/8", "10.0.0.1/8", "fc00::/129", "fc00::1/7",
                           "fe80::%eth0/10", "10/8", "10.0.0.0 /8", "10.0.0.0/ 8", "::/1x"}) {
    EXPECT_FALSE(Cidr::Parse(text).ok()) << '"' << text << '"';
  }
  const absl::Status status = Cidr::Parse("10.0.0.1/8").status();
  EXPECT_NE(status.message().find("did you mean 10.0.0.0/8"), absl::string_view::npos) << status;
}

TEST(CidrTest, ParseList) {
  absl::StatusOr<std::vector<Cidr>> list = Cidr::ParseList(" 10.0.0.0/8, 168.63.129.16 fc00::/7,");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[1].ToString(), "168.63.129.16/32");
  EXPECT_TRUE(Cidr::ParseList("").ok());
  EXPECT_TRUE(Cidr::ParseList("  ")->empty());
  const absl::Status bad = Cidr::ParseList("10.0.0.0/8,nonsense").status();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("nonsense"), absl::string_view::npos) << bad;
}

struct EdgeCase {
  const char* block;
  const char* first;
  const char* last;
  const char* below;  // one before the first address
  const char* above;  // one past the last address
};

TEST(CidrTest, ContainsEdges) {
  const EdgeCase cases[] = {
      {"10.0.0.0/8", "10.0.0.0", "10.255.255.255", "9.255.255.255", "11.0.0.0"},
      {"100.64.0.0/10", "100.64.0.0", "100.127.255.255", "100.63.255.255", "100.128.0.0"},
      {"172.16.0.0/12", "172.16.0.0", "172.31.255.255", "172.15.255.255", "172.32.0.0"},
      {"198.18.0.0/15", "198.18.0.0", "198.19.255.255", "198.17.255.255", "198.20.0.0"},
      {"224.0.0.0/4", "224.0.0.0", "239.255.255.255", "223.255.255.255", "240.0.0.0"},
      {"255.255.255.254/32", "255.255.255.254", "255.255.255.254", "255.255.255.253",
       "255.255.255.255"},
      {"fc00::/7", "fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
       "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe00::"},
      {"fe80::/10", "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
       "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fec0::"},
      {"2001::/23", "2001::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
       "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::"},
      // Prefixes that end inside the low 64 bits.
      {"::ffff:0:0/96", "::ffff:0:0", "::ffff:ffff:ffff", "::fffe:ffff:ffff", "::1:0:0:0"},
      {"100::/64", "100::", "100::ffff:ffff:ffff:ffff", "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
       "100:0:0:1::"},
      {"::1/128", "::1", "::1", "::", "::2"},
      {"2000::/3", "2000::", "3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
       "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "4000::"},
  };
  for (const EdgeCase& c : cases) {
    const Cidr block = Block(c.block);
    EXPECT_TRUE(block.Contains(Ip(c.first))) << c.block << " " << c.first;
    EXPECT_TRUE(block.Contains(Ip(c.last))) << c.block << " " << c.last;
    EXPECT_FALSE(block.Contains(Ip(c.below))) << c.block << " " << c.below;
    EXPECT_FALSE(block.Contains(Ip(c.above))) << c.block << " " << c.above;
  }
}

TEST(CidrTest, WholeSpaceAndFamilies) {
  EXPECT_TRUE(Block("0.0.0.0/0").Contains(Ip("255.255.255.255")));
  EXPECT_TRUE(Block("::/0").Contains(Ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")));
  // Families never mix: the mapped form of 127.0.0.1 is not inside 127.0.0.0/8.
  EXPECT_FALSE(Block("127.0.0.0/8").Contains(Ip("::ffff:127.0.0.1")));
  EXPECT_FALSE(Block("::/0").Contains(Ip("127.0.0.1")));
  EXPECT_FALSE(Block("0.0.0.0/0").Contains(Ip("::")));
  // Zone ids do not take part in containment.
  EXPECT_TRUE(Block("fe80::/10").Contains(Ip("fe80::1%eth0")));
}

TEST(CidrTest, Of) {
  EXPECT_EQ(Cidr::Of(Ip("10.1.2.3"), 8).ToString(), "10.0.0.0/8");
  EXPECT_EQ(Cidr::Of(Ip("fe80::1%eth0"), 10).ToString(), "fe80::/10");
  EXPECT_EQ(Cidr::Of(Ip("10.1.2.3"), 99).ToString(), "10.1.2.3/32");
  EXPECT_EQ(Cidr::Of(Ip("2001:db8::1"), -5).ToString(), "::/0");
  EXPECT_EQ(Cidr::Of(Ip("2001:db8:aaaa:bbbb:cccc::1"), 72).ToString(),
            "2001:db8:aaaa:bbbb:cc00::/72");
}

}  // namespace
}  // namespace portcullis::net
