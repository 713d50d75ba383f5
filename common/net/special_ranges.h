#pragma once

// The address blocks Portcullis never connects to, one table per family, each row as written in
// ../shared/SSRF-POLICY.md: the block, its name in the IANA special-purpose registries (or the
// policy's own words), and why it is refused.
//
// IPv4: every address outside the rows is allowed.
// IPv6: only 2000::/3 (global unicast) minus its rows is allowed. Everything outside 2000::/3 is
// refused by one of three rows that together cover it (::/3, 4000::/2, 8000::/1), and the blocks
// there that have a name of their own (::1, fc00::/7, fe80::/10, the IPv4 embeddings, ...) have
// a row of their own, so that a refusal names the most specific block.

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/net/cidr.h"
#include "common/net/ip_address.h"

namespace portcullis::net {

struct SpecialRange {
  Cidr cidr;
  // Registry name, e.g. "loopback", "IPv4-mapped", "IETF-reserved space" (outside 2000::/3).
  absl::string_view name;
  // Why the policy refuses it, e.g. "cloud metadata 169.254.169.254".
  absl::string_view reason;
};

// The refused blocks, in the order of the policy's tables. Built once, on first use.
absl::Span<const SpecialRange> Ipv4RefusedRanges();
absl::Span<const SpecialRange> Ipv6RefusedRanges();

// The most specific (longest-prefix) refused block that contains `address`, or nullptr when the
// built-in policy allows it. Zone ids are not looked at here (AddressPolicy refuses them).
const SpecialRange* FindRefusedRange(const IpAddress& address);

}  // namespace portcullis::net
