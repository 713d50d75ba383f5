#include "common/net/address_policy.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace portcullis::net {
namespace {

IpAddress Ip(absl::string_view text) {
  absl::StatusOr<IpAddress> address = IpAddress::Parse(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.status();
  return address.ok() ? *address : IpAddress::Ipv4(0);
}

std::vector<Cidr> Blocks(absl::string_view text) {
  absl::StatusOr<std::vector<Cidr>> blocks = Cidr::ParseList(text);
  EXPECT_TRUE(blocks.ok()) << blocks.status();
  return blocks.ok() ? *blocks : std::vector<Cidr>{};
}

TEST(AddressPolicyTest, DefaultIsTheBuiltInTables) {
  const AddressPolicy policy;
  EXPECT_FALSE(policy.has_allow_list());
  EXPECT_TRUE(policy.Check(Ip("93.184.216.34")).ok());
  EXPECT_TRUE(policy.Check(Ip("2606:4700:4700::1111")).ok());
  const AddressVerdict verdict = policy.Classify(Ip("10.0.0.1"));
  EXPECT_FALSE(verdict.allowed());
  EXPECT_EQ(verdict.basis, AddressVerdict::Basis::kBuiltInRange);
  ASSERT_NE(verdict.range, nullptr);
  EXPECT_EQ(verdict.range->cidr.ToString(), "10.0.0.0/8");
  EXPECT_EQ(BasisLabel(verdict.basis), "built_in");
}

TEST(AddressPolicyTest, RefusalNamesTheBlockAndTheEmbeddedIpv4) {
  const AddressPolicy policy;
  const absl::Status mapped = policy.Check(Ip("::ffff:127.0.0.1"));
  EXPECT_EQ(mapped.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(mapped.message(),
            "address ::ffff:7f00:1 is in IPv4-mapped ::ffff:0:0/96 (embeds 127.0.0.1, itself in "
            "loopback 127.0.0.0/8): IPv4 embedding; reaches the embedded IPv4 address");
  const absl::Status public_6to4 = policy.Check(Ip("2002:808:808::1"));
  EXPECT_EQ(public_6to4.message(),
            "address 2002:808:808::1 is in 6to4 2002::/16 (embeds 8.8.8.8): IPv4 embedding "
            "(tunnel)");
  EXPECT_EQ(policy.Check(Ip("64:ff9c::1")).message(),
            "address 64:ff9c::1 is in IETF-reserved space ::/3: outside global unicast 2000::/3");
  const absl::Status loopback = policy.Check(Ip("127.0.0.1"));
  EXPECT_EQ(loopback.message(), "address 127.0.0.1 is in loopback 127.0.0.0/8: this host");
  const absl::Status teredo = policy.Check(Ip("2001:0:4136:e378:8000:63bf:3fff:fdd2"));
  EXPECT_NE(teredo.message().find("Teredo 2001::/32 (embeds 192.0.2.45, itself in "
                                  "documentation (TEST-NET-1) 192.0.2.0/24)"),
            absl::string_view::npos)
      << teredo;
}

TEST(AddressPolicyTest, ZoneIdIsAlwaysRefused) {
  const AddressPolicy policy({}, Blocks("fe80::/10, ::/0"));
  const AddressVerdict verdict = policy.Classify(Ip("fe80::1%eth0"));
  EXPECT_EQ(verdict.basis, AddressVerdict::Basis::kZoneId);
  const absl::Status status = policy.Check(Ip("2606:4700:4700::1111%eth0"));
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(status.message().find("zone id (%eth0)"), absl::string_view::npos) << status;
  EXPECT_TRUE(policy.Check(Ip("fe80::1")).ok()) << "allow-listed without a zone";
}

TEST(AddressPolicyTest, ExtraDenyListAlwaysApplies) {
  const AddressPolicy policy(Blocks("168.63.129.16, 2606:4700::/32"), Blocks("168.63.0.0/16"));
  const AddressVerdict verdict = policy.Classify(Ip("168.63.129.16"));
  EXPECT_EQ(verdict.basis, AddressVerdict::Basis::kExtraDenyList);
  ASSERT_TRUE(verdict.configured.has_value());
  EXPECT_EQ(verdict.configured->ToString(), "168.63.129.16/32");
  EXPECT_EQ(policy.Check(Ip("168.63.129.16")).message(),
            "address 168.63.129.16 is in the configured deny list block 168.63.129.16/32");
  EXPECT_FALSE(policy.Check(Ip("2606:4700:4700::1111")).ok());
  EXPECT_TRUE(policy.Check(Ip("168.63.129.17")).ok()) << "allow list, not the deny entry";
  EXPECT_TRUE(policy.Check(Ip("8.8.8.8")).ok());
}

TEST(AddressPolicyTest, AllowListWinsOnlyInsideItsBlocks) {
  const AddressPolicy policy({}, Blocks("127.0.0.0/8, ::1"));
  EXPECT_TRUE(policy.has_allow_list());
  const AddressVerdict loopback = policy.Classify(Ip("127.0.0.1"));
  EXPECT_TRUE(loopback.allowed());
  EXPECT_EQ(loopback.basis, AddressVerdict::Basis::kAllowList);
  ASSERT_NE(loopback.range, nullptr) << "the overridden block is recorded";
  EXPECT_EQ(loopback.range->name, "loopback");
  EXPECT_TRUE(policy.Check(Ip("::1")).ok());
  // Outside the allow list, the built-in tables still apply.
  EXPECT_FALSE(policy.Check(Ip("10.0.0.1")).ok());
  EXPECT_FALSE(policy.Check(Ip("169.254.169.254")).ok());
  // Families do not mix: allowing 127.0.0.0/8 does not allow its IPv4-mapped form.
  EXPECT_FALSE(policy.Check(Ip("::ffff:127.0.0.1")).ok());
  EXPECT_FALSE(policy.Check(Ip("::2")).ok());
  // A global address is global, not allow-listed.
  EXPECT_EQ(policy.Classify(Ip("1.1.1.1")).basis, AddressVerdict::Basis::kGlobal);
  EXPECT_EQ(BasisLabel(AddressVerdict::Basis::kAllowList), "allow_list");
}

TEST(AddressPolicyTest, DenyBeatsAllowForTheSameAddress) {
  const AddressPolicy policy(Blocks("127.0.0.2"), Blocks("127.0.0.0/8"));
  EXPECT_TRUE(policy.Check(Ip("127.0.0.1")).ok());
  EXPECT_EQ(policy.Classify(Ip("127.0.0.2")).basis, AddressVerdict::Basis::kExtraDenyList);
}

}  // namespace
}  // namespace portcullis::net
