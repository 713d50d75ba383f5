#include "common/net/special_ranges.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace portcullis::net {
namespace {

IpAddress Ip(absl::string_view text) {
  absl::StatusOr<IpAddress> address = IpAddress::Parse(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.status();
  return address.ok() ? *address : IpAddress::Ipv4(0);
}

struct Hit {
  const char* address;
  const char* block;  // the most specific refused block
  const char* name;
};

// At least one address for every row of both tables (checked below), most rows at their edges.
constexpr Hit kHits[] = {
    {"0.0.0.0", "0.0.0.0/8", "this network"},
    {"0.255.255.255", "0.0.0.0/8", "this network"},
    {"10.0.0.0", "10.0.0.0/8", "private use"},
    {"10.255.255.255", "10.0.0.0/8", "private use"},
    {"100.64.0.0", "100.64.0.0/10", "shared address space (CGNAT)"},
    {"100.100.100.200", "100.64.0.0/10", "shared address space (CGNAT)"},
    {"127.0.0.1", "127.0.0.0/8", "loopback"},
    {"169.254.169.254", "169.254.0.0/16", "link local"},
    {"172.16.0.0", "172.16.0.0/12", "private use"},
    {"172.31.255.255", "172.16.0.0/12", "private use"},
    {"192.0.0.170", "192.0.0.0/24", "IETF protocol assignments"},
    {"192.0.2.1", "192.0.2.0/24", "documentation (TEST-NET-1)"},
    {"192.88.99.1", "192.88.99.0/24", "deprecated 6to4 relay anycast"},
    {"192.168.1.1", "192.168.0.0/16", "private use"},
    {"198.18.0.0", "198.18.0.0/15", "benchmarking"},
    {"198.19.255.255", "198.18.0.0/15", "benchmarking"},
    {"198.51.100.7", "198.51.100.0/24", "documentation (TEST-NET-2)"},
    {"203.0.113.255", "203.0.113.0/24", "documentation (TEST-NET-3)"},
    {"224.0.0.1", "224.0.0.0/4", "multicast"},
    {"239.255.255.255", "224.0.0.0/4", "multicast"},
    {"240.0.0.0", "240.0.0.0/4", "reserved"},
    {"255.255.255.254", "240.0.0.0/4", "reserved"},
    {"255.255.255.255", "255.255.255.255/32", "limited broadcast"},

    {"::", "::/128", "unspecified"},
    {"::1", "::1/128", "loopback"},
    {"::2", "::/96", "IPv4-compatible"},
    {"::7f00:1", "::/96", "IPv4-compatible"},
    {"::ffff:127.0.0.1", "::ffff:0:0/96", "IPv4-mapped"},
    {"::ffff:8.8.8.8", "::ffff:0:0/96", "IPv4-mapped"},
    {"::ffff:0:7f00:1", "::ffff:0:0:0/96", "IPv4-translated"},
    {"64:ff9b::a9fe:a9fe", "64:ff9b::/96", "NAT64"},
    {"64:ff9b:1:7f00:0:100::", "64:ff9b:1::/48", "local-use NAT64"},
    {"100::1", "100::/64", "discard-only"},
    {"5f00::1", "5f00::/16", "segment routing (SRv6) SIDs"},
    {"fc00::", "fc00::/7", "unique local"},
    {"fd00:ec2::254", "fc00::/7", "unique local"},
    {"fe80::1", "fe80::/10", "link local"},
    {"fec0::1", "fec0::/10", "site local (deprecated)"},
    {"ff02::1", "ff00::/8", "multicast"},
    {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "::/3", "IETF-reserved space"},
    {"64:ff9c::1", "::/3", "IETF-reserved space"},
    {"4000::", "4000::/2", "IETF-reserved space"},
    {"8000::", "8000::/1", "IETF-reserved space"},
    {"e000::1", "8000::/1", "IETF-reserved space"},
    {"2001:1::1", "2001::/23", "IETF protocol assignments"},
    {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23", "IETF protocol assignments"},
    {"2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/32", "Teredo"},
    {"2001:2::1", "2001:2::/48", "benchmarking"},
    {"2001:10::1", "2001:10::/28", "ORCHID (deprecated)"},
    {"2001:20::1", "2001:20::/28", "ORCHIDv2"},
    {"2001:db8::1337", "2001:db8::/32", "documentation"},
    {"3fff::1", "3fff::/20", "documentation"},
    {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20", "documentation"},
    {"2002:808:808::1", "2002::/16", "6to4"},
};

TEST(SpecialRangesTest, EveryRowIsHitAndNamesTheMostSpecificBlock) {
  std::set<const SpecialRange*> hit;
  for (const Hit& h : kHits) {
    const SpecialRange* range = FindRefusedRange(Ip(h.address));
    ASSERT_NE(range, nullptr) << h.address << " should be refused";
    EXPECT_EQ(range->cidr.ToString(), h.block) << h.address;
    EXPECT_EQ(range->name, h.name) << h.address;
    EXPECT_FALSE(range->reason.empty()) << h.block;
    if (range->name == "IETF-reserved space") {
      EXPECT_EQ(range->reason, "outside global unicast 2000::/3") << h.address;
    }
    hit.insert(range);
  }
  for (const SpecialRange& range : Ipv4RefusedRanges()) {
    EXPECT_TRUE(hit.count(&range)) << "no test address in IPv4 row " << range.cidr.ToString();
  }
  for (const SpecialRange& range : Ipv6RefusedRanges()) {
    EXPECT_TRUE(hit.count(&range)) << "no test address in IPv6 row " << range.cidr.ToString();
  }
}

TEST(SpecialRangesTest, TablesHaveThePolicysRows) {
  EXPECT_EQ(Ipv4RefusedRanges().size(), 16u);
  EXPECT_EQ(Ipv6RefusedRanges().size(), 24u);
  for (const SpecialRange& range : Ipv4RefusedRanges()) {
    EXPECT_EQ(range.cidr.family(), IpAddress::Family::kIpv4) << range.cidr.ToString();
  }
  for (const SpecialRange& range : Ipv6RefusedRanges()) {
    EXPECT_EQ(range.cidr.family(), IpAddress::Family::kIpv6) << range.cidr.ToString();
  }
}

TEST(SpecialRangesTest, GlobalAddressesAreInNoBlock) {
  for (const char* text : {"1.0.0.0",
                           "1.1.1.1",
                           "8.8.8.8",
                           "9.255.255.255",
                           "11.0.0.0",
                           "93.184.216.34",
                           "100.63.255.255",
                           "100.128.0.0",
                           "126.255.255.255",
                           "128.0.0.0",
                           "169.253.255.255",
                           "169.255.0.0",
                           "172.15.255.255",
                           "172.32.0.0",
                           "192.0.1.0",
                           "192.0.3.0",
                           "192.88.98.255",
                           "192.88.100.0",
                           "192.167.255.255",
                           "192.169.0.0",
                           "198.17.255.255",
                           "198.20.0.0",
                           "198.51.99.255",
                           "198.51.101.0",
                           "203.0.112.255",
                           "203.0.114.0",
                           "223.255.255.255",
                           "2000::",
                           "2001:200::1",
                           "2001:db7:ffff::1",
                           "2001:db9::",
                           "2003::1",
                           "2606:4700:4700::1111",
                           "2606:2800:220:1:248:1893:25c8:1946",
                           "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                           "3fff:1000::"}) {
    const SpecialRange* range = FindRefusedRange(Ip(text));
    EXPECT_EQ(range, nullptr) << text << " is in " << range->cidr.ToString();
  }
}

TEST(SpecialRangesTest, ZoneDoesNotChangeTheBlock) {
  const SpecialRange* range = FindRefusedRange(Ip("fe80::1%eth0"));
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->name, "link local");
}

}  // namespace
}  // namespace portcullis::net
