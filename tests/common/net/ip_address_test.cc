#include "common/net/ip_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

#include "common/url/url.h"
#include "gtest/gtest.h"

namespace portcullis::net {
namespace {

IpAddress MustParse(absl::string_view text) {
  absl::StatusOr<IpAddress> address = IpAddress::Parse(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.status();
  return address.ok() ? *address : IpAddress::Ipv4(0);
}

TEST(IpAddressTest, Ipv4DottedQuadRoundTrips) {
  for (const char* text :
       {"0.0.0.0", "127.0.0.1", "93.184.216.34", "255.255.255.255", "10.0.0.1"}) {
    const IpAddress address = MustParse(text);
    EXPECT_TRUE(address.is_ipv4());
    EXPECT_EQ(address.ToString(), text);
  }
  EXPECT_EQ(MustParse("127.0.0.1").ipv4(), 0x7f000001u);
  EXPECT_EQ(MustParse("255.255.255.255").ipv4(), 0xffffffffu);
}

TEST(IpAddressTest, Ipv4OnlyStrictDottedQuad) {
  // URL-host spellings are the WHATWG parser's job (FromUrl); a resolver never writes them.
  for (const char* text :
       {"",          "127.1",     "127.0.1",   "2130706433", "0x7f.0.0.1",   "0177.0.0.1",
        "01.2.3.4",  "256.0.0.1", "1.2.3.4.",  ".1.2.3.4",   "1.2.3.4.5",    "1..2.3",
        "+1.2.3.4",  "1.2.3.-4",  " 1.2.3.4",  "1.2.3.4 ",   "1.2.3.4%eth0", "1.2.3.4/8",
        "[1.2.3.4]", "1.2.3.a",   "1.2.3.4:80"}) {
    EXPECT_FALSE(IpAddress::Parse(text).ok()) << '"' << text << '"';
  }
}

TEST(IpAddressTest, Ipv6CanonicalFormRfc5952) {
  const std::pair<const char*, const char*> cases[] = {
      {"::", "::"},
      {"0:0:0:0:0:0:0:0", "::"},
      {"0000:0000:0000:0000:0000:0000:0000:0001", "::1"},
      {"2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},     // first of two equal runs
      {"2001:db8:0:0:0:1:0:0", "2001:db8::1:0:0"},       // the longest run
      {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},  // a single zero group is not "::"
      {"2606:4700:4700::1111", "2606:4700:4700::1111"},
      {"fe80::0001", "fe80::1"},
      {"::ffff:127.0.0.1", "::ffff:7f00:1"},
      {"0:0:0:0:0:ffff:127.0.0.1", "::ffff:7f00:1"},
      {"::127.0.0.1", "::7f00:1"},
      {"1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"},
      {"::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"},
      {"FDFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
  };
  for (const auto& [text, canonical] : cases) {
    const IpAddress address = MustParse(text);
    EXPECT_TRUE(address.is_ipv6()) << text;
    EXPECT_EQ(address.ToString(), canonical) << text;
    EXPECT_EQ(MustParse(canonical), address) << "canonical form reads back: " << canonical;
  }
  const IpAddress mapped = MustParse("::ffff:10.0.0.1");
  const std::array<uint16_t, 8> groups = {0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001};
  EXPECT_EQ(mapped.ipv6(), groups);
  EXPECT_EQ(mapped.ipv6_high(), 0u);
  EXPECT_EQ(mapped.ipv6_low(), 0x0000ffff0a000001u);
}

TEST(IpAddressTest, Ipv6ZoneIsKept) {
  const IpAddress scoped = MustParse("fe80::1%eth0");
  EXPECT_TRUE(scoped.has_zone());
  EXPECT_EQ(scoped.zone(), "eth0");
  EXPECT_EQ(scoped.ToString(), "fe80::1%eth0");
  EXPECT_FALSE(scoped == MustParse("fe80::1"));
  EXPECT_EQ(MustParse("::1%1").zone(), "1");
  EXPECT_FALSE(MustParse("fe80::1").has_zone());
}

TEST(IpAddressTest, Ipv6Malformed) {
  for (const char* text : {":",
                           ":::",
                           "1:2:3:4:5:6:7",
                           "1:2:3:4:5:6:7:8:9",
                           "1::2::3",
                           ":1::2",
                           "1::2:",
                           "1:2:",
                           "12345::",
                           "g::1",
                           "::1%",
                           "fe80::1%eth 0",
                           "fe80::1%eth0%1",
                           "[::1]",
                           "::ffff:1.2.3",
                           "::ffff:1.2.3.4:5",
                           "1:2:3:4:5:6:7:1.2.3.4",
                           "1:2:3:4:5:6:7:8::",
                           "::1.2.3.4.5",
                           "::ffff:01.2.3.4",
                           "1:2:3:4:5:6:7:8%",
                           " ::1"}) {
    EXPECT_FALSE(IpAddress::Parse(text).ok()) << '"' << text << '"';
  }
}

TEST(IpAddressTest, FromUrlTakesTheWhatwgParsersIntegers) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://0x7f.1/", "127.0.0.1"},
      {"http://2130706433/", "127.0.0.1"},
      {"http://0177.0.0.1/", "127.0.0.1"},
      {"http://127.1/", "127.0.0.1"},
      {"http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"},
      {"http://[2606:4700:4700::1111]:8080/", "2606:4700:4700::1111"},
  };
  for (const auto& [input, expected] : cases) {
    const absl::StatusOr<url::Url> parsed = url::ParseUrl(input);
    ASSERT_TRUE(parsed.ok()) << input;
    const std::optional<IpAddress> address = IpAddress::FromUrl(*parsed);
    ASSERT_TRUE(address.has_value()) << input;
    EXPECT_EQ(address->ToString(), expected) << input;
  }
  const absl::StatusOr<url::Url> domain = url::ParseUrl("http://example.com/");
  ASSERT_TRUE(domain.ok());
  EXPECT_FALSE(IpAddress::FromUrl(*domain).has_value());
}

TEST(IpAddressTest, FromSockaddr) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  ASSERT_EQ(inet_pton(AF_INET, "169.254.169.254", &in.sin_addr), 1);
  std::optional<IpAddress> v4 =
      IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&in), sizeof(in));
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->ToString(), "169.254.169.254");

  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "fe80::1", &in6.sin6_addr), 1);
  in6.sin6_scope_id = 2;
  std::optional<IpAddress> v6 =
      IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&in6), sizeof(in6));
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->ToString(), "fe80::1%2");

  in6.sin6_scope_id = 0;
  ASSERT_EQ(inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr), 1);
  v6 = IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&in6), sizeof(in6));
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->ToString(), "::ffff:7f00:1");
  EXPECT_FALSE(v6->has_zone());

  EXPECT_FALSE(IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&in6), 8).has_value());
  EXPECT_FALSE(IpAddress::FromSockaddr(nullptr, 0).has_value());
  sockaddr unix_like{};
  unix_like.sa_family = AF_UNIX;
  EXPECT_FALSE(IpAddress::FromSockaddr(&unix_like, sizeof(unix_like)).has_value());
}

struct EmbeddingCase {
  const char* address;
  Ipv4EmbeddingKind kind;
  const char* ipv4;
};

TEST(IpAddressTest, EmbeddedIpv4ForEachPrefix) {
  const EmbeddingCase cases[] = {
      {"::ffff:127.0.0.1", Ipv4EmbeddingKind::kMapped, "127.0.0.1"},
      {"::ffff:a9fe:a9fe", Ipv4EmbeddingKind::kMapped, "169.254.169.254"},
      {"::ffff:0.0.0.0", Ipv4EmbeddingKind::kMapped, "0.0.0.0"},
      {"::ffff:0:7f00:1", Ipv4EmbeddingKind::kTranslated, "127.0.0.1"},
      {"::7f00:1", Ipv4EmbeddingKind::kCompatible, "127.0.0.1"},
      {"::a9fe:a9fe", Ipv4EmbeddingKind::kCompatible, "169.254.169.254"},
      {"::0.0.0.2", Ipv4EmbeddingKind::kCompatible, "0.0.0.2"},
      {"64:ff9b::7f00:1", Ipv4EmbeddingKind::kNat64, "127.0.0.1"},
      {"64:ff9b::a9fe:a9fe", Ipv4EmbeddingKind::kNat64, "169.254.169.254"},
      // RFC 6052 §2.2 /48: v4[0..15] in bits 48..63, u octet (bits 64..71), v4[16..31] in 72..87.
      {"64:ff9b:1:7f00:0:100::", Ipv4EmbeddingKind::kNat64Local, "127.0.0.1"},
      {"64:ff9b:1:a00:0:100::", Ipv4EmbeddingKind::kNat64Local, "10.0.0.1"},
      {"64:ff9b:1:c000:2:2100::", Ipv4EmbeddingKind::kNat64Local, "192.0.2.33"},
      {"2002:7f00:1::1", Ipv4EmbeddingKind::k6to4, "127.0.0.1"},
      {"2002:808:808::1", Ipv4EmbeddingKind::k6to4, "8.8.8.8"},
      {"2002:a9fe:a9fe::", Ipv4EmbeddingKind::k6to4, "169.254.169.254"},
      // RFC 4380 example: client 192.0.2.45 is the bitwise NOT of the last 32 bits.
      {"2001:0:4136:e378:8000:63bf:3fff:fdd2", Ipv4EmbeddingKind::kTeredo, "192.0.2.45"},
  };
  for (const EmbeddingCase& c : cases) {
    const std::optional<IpAddress::EmbeddedIpv4> embedded = MustParse(c.address).FindEmbeddedIpv4();
    ASSERT_TRUE(embedded.has_value()) << c.address;
    EXPECT_EQ(embedded->kind, c.kind) << c.address << " " << Ipv4EmbeddingName(embedded->kind);
    EXPECT_EQ(Ipv4ToString(embedded->ipv4), c.ipv4) << c.address;
  }
}

TEST(IpAddressTest, NoEmbeddedIpv4Elsewhere) {
  for (const char* text : {"::", "::1", "127.0.0.1", "2606:4700:4700::1111", "fe80::1",
                           "64:ff9c::1", "2001:1::1", "2003::1", "::1:0:0:0", "::ffff:1:0:0:0"}) {
    EXPECT_FALSE(MustParse(text).FindEmbeddedIpv4().has_value()) << text;
  }
  EXPECT_EQ(Ipv4EmbeddingName(Ipv4EmbeddingKind::kMapped), "IPv4-mapped");
  EXPECT_EQ(Ipv4EmbeddingName(Ipv4EmbeddingKind::kTeredo), "Teredo");
}

}  // namespace
}  // namespace portcullis::net
