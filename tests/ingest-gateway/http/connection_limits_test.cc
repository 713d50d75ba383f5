// The HTTP server's admission counting, without sockets: the total cap, the per-address cap,
// exempt proxies, and every slot given back (the table forgets an address with nothing open).
#include "ingest-gateway/src/http/connection_limits.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace portcullis::gateway::http {
namespace {

using Verdict = ConnectionLimits::Verdict;

ConnectionLimitsOptions Options(size_t total, size_t per_address,
                                std::vector<std::string> exempt = {}) {
  ConnectionLimitsOptions options;
  options.max_total = total;
  options.max_per_address = per_address;
  for (const std::string& block : exempt) {
    options.exempt.push_back(*net::Cidr::Parse(block));
  }
  return options;
}

TEST(GatewayConnectionLimitsTest, TheAddressOverItsCapIsRefusedOthersAreNot) {
  ConnectionLimits limits(Options(1000, 64));
  std::vector<ConnectionLimits::Slot> slots(64);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(limits.Admit(absl::StrCat("127.0.0.1:", 40000 + i), &slots[i]), Verdict::kAdmitted);
  }
  ConnectionLimits::Slot refused;
  EXPECT_EQ(limits.Admit("127.0.0.1:50000", &refused), Verdict::kOverAddressLimit);
  EXPECT_FALSE(refused.counted);
  EXPECT_EQ(limits.open_from("127.0.0.1:1"), 64u);

  ConnectionLimits::Slot other;
  EXPECT_EQ(limits.Admit("127.0.0.2:50000", &other), Verdict::kAdmitted);
  EXPECT_EQ(limits.open(), 65u);

  // One closes: the address is served again, once.
  limits.Release(&slots[0]);
  ConnectionLimits::Slot again;
  EXPECT_EQ(limits.Admit("127.0.0.1:50001", &again), Verdict::kAdmitted);
  EXPECT_EQ(limits.Admit("127.0.0.1:50002", &refused), Verdict::kOverAddressLimit);
}

TEST(GatewayConnectionLimitsTest, TheTotalCapStaysAndTheAddressCapIsToldFirst) {
  ConnectionLimits limits(Options(3, 2));
  ConnectionLimits::Slot a1, a2, b1, c1, refused;
  ASSERT_EQ(limits.Admit("10.0.0.1:1", &a1), Verdict::kAdmitted);
  ASSERT_EQ(limits.Admit("10.0.0.1:2", &a2), Verdict::kAdmitted);
  ASSERT_EQ(limits.Admit("10.0.0.2:1", &b1), Verdict::kAdmitted);
  EXPECT_EQ(limits.Admit("10.0.0.3:1", &c1), Verdict::kOverTotalLimit);
  EXPECT_EQ(limits.Admit("10.0.0.1:3", &refused), Verdict::kOverAddressLimit);
  limits.Release(&b1);
  EXPECT_EQ(limits.Admit("10.0.0.3:1", &c1), Verdict::kAdmitted);
}

TEST(GatewayConnectionLimitsTest, ReleaseGivesEverySlotBackAndForgetsIdleAddresses) {
  ConnectionLimits limits(Options(100000, 2));
  std::vector<ConnectionLimits::Slot> slots(10000);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_EQ(limits.Admit(absl::StrCat("10.", i / 256, ".", i % 256, ".1:80"), &slots[i]),
              Verdict::kAdmitted);
  }
  EXPECT_EQ(limits.addresses(), 10000u);
  for (ConnectionLimits::Slot& slot : slots) {
    limits.Release(&slot);
    limits.Release(&slot);  // a second release of the same slot does nothing
  }
  EXPECT_EQ(limits.open(), 0u);
  EXPECT_EQ(limits.addresses(), 0u) << "the table holds only addresses with connections open";
  ConnectionLimits::Slot refused;
  EXPECT_FALSE(refused.counted);
  limits.Release(&refused);  // a refused connection holds nothing
  EXPECT_EQ(limits.open(), 0u);
}

TEST(GatewayConnectionLimitsTest, TrustedProxiesAreNotCappedPerAddressButCountInTheTotal) {
  ConnectionLimits limits(Options(10, 1, {"10.1.0.0/16"}));
  std::vector<ConnectionLimits::Slot> slots(10);
  for (int i = 0; i < 9; ++i) {
    ASSERT_EQ(limits.Admit(absl::StrCat("10.1.2.3:", 1000 + i), &slots[i]), Verdict::kAdmitted);
  }
  EXPECT_EQ(limits.open_from("10.1.2.3:1"), 0u) << "not counted per address";
  EXPECT_EQ(limits.addresses(), 0u);
  ASSERT_EQ(limits.Admit("10.2.0.1:1", &slots[9]), Verdict::kAdmitted);
  ConnectionLimits::Slot refused;
  EXPECT_EQ(limits.Admit("10.2.0.1:2", &refused), Verdict::kOverAddressLimit);
  EXPECT_EQ(limits.Admit("10.1.2.3:2000", &refused), Verdict::kOverTotalLimit);
}

TEST(GatewayConnectionLimitsTest, ZeroTurnsThePerAddressCapOff) {
  ConnectionLimits limits(Options(500, 0));
  std::vector<ConnectionLimits::Slot> slots(500);
  for (int i = 0; i < 500; ++i) {
    ASSERT_EQ(limits.Admit(absl::StrCat("127.0.0.1:", 1000 + i), &slots[i]), Verdict::kAdmitted);
  }
  EXPECT_EQ(limits.addresses(), 0u);
  ConnectionLimits::Slot refused;
  EXPECT_EQ(limits.Admit("127.0.0.1:9", &refused), Verdict::kOverTotalLimit);
}

TEST(GatewayConnectionLimitsTest, AnIpv6HostIsCountedByItsSlash64) {
  ConnectionLimits limits(Options(100, 2));
  ConnectionLimits::Slot a, b, refused, other;
  ASSERT_EQ(limits.Admit("[2001:db8:1:2::1]:1", &a), Verdict::kAdmitted);
  ASSERT_EQ(limits.Admit("[2001:db8:1:2:ffff::9]:1", &b), Verdict::kAdmitted);
  EXPECT_EQ(limits.Admit("[2001:db8:1:2::7]:1", &refused), Verdict::kOverAddressLimit);
  EXPECT_EQ(limits.Admit("[2001:db8:1:3::1]:1", &other), Verdict::kAdmitted);
  // An IPv4-mapped peer is its IPv4 address.
  ConnectionLimits::Slot v4a, v4b;
  ASSERT_EQ(limits.Admit("192.0.2.1:1", &v4a), Verdict::kAdmitted);
  ASSERT_EQ(limits.Admit("[::ffff:192.0.2.1]:2", &v4b), Verdict::kAdmitted);
  EXPECT_EQ(limits.Admit("192.0.2.1:3", &refused), Verdict::kOverAddressLimit);
}

}  // namespace
}  // namespace portcullis::gateway::http
