#include "common/net/special_ranges.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/logging/log.h"

namespace portcullis::net {
namespace {

struct Row {
  absl::string_view cidr;
  absl::string_view name;
  absl::string_view reason;
};

// ../shared/SSRF-POLICY.md, "IPv4 blocks refused".
constexpr Row kIpv4Rows[] = {
    {"0.0.0.0/8", "this network", "not a destination; Linux sends 0.0.0.0 to the local host"},
    {"10.0.0.0/8", "private use", "internal networks"},
    {"100.64.0.0/10", "shared address space (CGNAT)",
     "provider-internal; some cloud metadata lives here"},
    {"127.0.0.0/8", "loopback", "this host"},
    {"169.254.0.0/16", "link local", "cloud metadata 169.254.169.254"},
    {"172.16.0.0/12", "private use", "internal networks"},
    {"192.0.0.0/24", "IETF protocol assignments", "not web servers"},
    {"192.0.2.0/24", "documentation (TEST-NET-1)", "never real"},
    {"192.88.99.0/24", "deprecated 6to4 relay anycast", "tunnels"},
    {"192.168.0.0/16", "private use", "internal networks"},
    {"198.18.0.0/15", "benchmarking", "lab networks"},
    {"198.51.100.0/24", "documentation (TEST-NET-2)", "never real"},
    {"203.0.113.0/24", "documentation (TEST-NET-3)", "never real"},
    {"224.0.0.0/4", "multicast", "not unicast"},
    {"240.0.0.0/4", "reserved", "not reachable"},
    {"255.255.255.255/32", "limited broadcast", "not a unicast destination"},
};

// ../shared/SSRF-POLICY.md, "IPv6 blocks refused".
constexpr Row kIpv6Rows[] = {
    // Outside 2000::/3: all of it, as three blocks ("Reserved by IETF" in the IANA IPv6 Address
    // Space wherever no more specific row applies), then the named blocks within.
    {"::/3", "IETF-reserved space", "outside global unicast 2000::/3"},
    {"4000::/2", "IETF-reserved space", "outside global unicast 2000::/3"},
    {"8000::/1", "IETF-reserved space", "outside global unicast 2000::/3"},
    {"::/128", "unspecified", "not a destination; Linux connects :: to the local host"},
    {"::1/128", "loopback", "this host"},
    {"::/96", "IPv4-compatible", "deprecated IPv4 embedding"},
    {"::ffff:0:0/96", "IPv4-mapped", "IPv4 embedding; reaches the embedded IPv4 address"},
    {"::ffff:0:0:0/96", "IPv4-translated", "IPv4 embedding (SIIT)"},
    {"64:ff9b::/96", "NAT64", "IPv4 embedding; a NAT64 gateway reaches the embedded address"},
    {"64:ff9b:1::/48", "local-use NAT64", "IPv4 embedding for local translators"},
    {"100::/64", "discard-only", "not a destination"},
    {"5f00::/16", "segment routing (SRv6) SIDs", "not a destination"},
    {"fc00::/7", "unique local", "internal networks; AWS metadata fd00:ec2::254"},
    {"fe80::/10", "link local", "this link only"},
    {"fec0::/10", "site local (deprecated)", "internal networks"},
    {"ff00::/8", "multicast", "not unicast"},
    // Inside 2000::/3.
    {"2001::/23", "IETF protocol assignments", "not web servers"},
    {"2001::/32", "Teredo", "IPv4 embedding (tunnel)"},
    {"2001:2::/48", "benchmarking", "lab networks"},
    {"2001:10::/28", "ORCHID (deprecated)", "not routable"},
    {"2001:20::/28", "ORCHIDv2", "not routable"},
    {"2001:db8::/32", "documentation", "never real"},
    {"3fff::/20", "documentation", "never real"},
    {"2002::/16", "6to4", "IPv4 embedding (tunnel)"},
};

template <size_t N>
std::vector<SpecialRange> Build(const Row (&rows)[N]) {
  std::vector<SpecialRange> ranges;
  ranges.reserve(N);
  for (const Row& row : rows) {
    absl::StatusOr<Cidr> cidr = Cidr::Parse(row.cidr);
    if (!cidr.ok()) {
      // A typo in the tables above: a bug, caught by the first test that runs.
      logging::Error("special_ranges: bad built-in block {}: {}", std::string(row.cidr),
                     cidr.status().ToString());
      std::abort();
    }
    ranges.push_back(SpecialRange{*std::move(cidr), row.name, row.reason});
  }
  return ranges;
}

}  // namespace

absl::Span<const SpecialRange> Ipv4RefusedRanges() {
  static const std::vector<SpecialRange>* const ranges =
      new std::vector<SpecialRange>(Build(kIpv4Rows));
  return *ranges;
}

absl::Span<const SpecialRange> Ipv6RefusedRanges() {
  static const std::vector<SpecialRange>* const ranges =
      new std::vector<SpecialRange>(Build(kIpv6Rows));
  return *ranges;
}

namespace {

// The tables above compiled for lookup: each block as (network, mask) over the 128 address bits
// (IPv4 in `low`), ordered by prefix length, longest first, keeping the policy's order among equal
// lengths. The first row that matches is then the one the definition asks for: the longest
// prefix, and of equal ones the first in the policy's table.
struct CompiledRange {
  uint64_t high;
  uint64_t low;
  uint64_t mask_high;
  uint64_t mask_low;
  const SpecialRange* range;
};

uint64_t PrefixMask64(int bits) {
  if (bits <= 0) {
    return 0;
  }
  if (bits >= 64) {
    return ~uint64_t{0};
  }
  return ~uint64_t{0} << (64 - bits);
}

std::vector<CompiledRange> Compile(absl::Span<const SpecialRange> ranges) {
  std::vector<CompiledRange> compiled;
  compiled.reserve(ranges.size());
  for (const SpecialRange& range : ranges) {
    const IpAddress& network = range.cidr.network();
    const int length = range.cidr.prefix_length();
    if (network.is_ipv4()) {
      compiled.push_back(CompiledRange{0, network.ipv4(), 0,
                                       length <= 0 ? 0 : PrefixMask64(length) >> 32, &range});
    } else {
      compiled.push_back(CompiledRange{network.ipv6_high(), network.ipv6_low(),
                                       PrefixMask64(length), PrefixMask64(length - 64), &range});
    }
  }
  std::stable_sort(compiled.begin(), compiled.end(),
                   [](const CompiledRange& a, const CompiledRange& b) {
                     return a.range->cidr.prefix_length() > b.range->cidr.prefix_length();
                   });
  return compiled;
}

const std::vector<CompiledRange>& CompiledIpv4() {
  static const std::vector<CompiledRange>* const compiled =
      new std::vector<CompiledRange>(Compile(Ipv4RefusedRanges()));
  return *compiled;
}

const std::vector<CompiledRange>& CompiledIpv6() {
  static const std::vector<CompiledRange>* const compiled =
      new std::vector<CompiledRange>(Compile(Ipv6RefusedRanges()));
  return *compiled;
}

}  // namespace

const SpecialRange* FindRefusedRange(const IpAddress& address) {
  if (address.is_ipv4()) {
    const uint64_t value = address.ipv4();
    for (const CompiledRange& row : CompiledIpv4()) {
      if (((value ^ row.low) & row.mask_low) == 0) {
        return row.range;
      }
    }
    return nullptr;
  }
  const uint64_t high = address.ipv6_high();
  const uint64_t low = address.ipv6_low();
  for (const CompiledRange& row : CompiledIpv6()) {
    if (((high ^ row.high) & row.mask_high) == 0 && ((low ^ row.low) & row.mask_low) == 0) {
      return row.range;
    }
  }
  return nullptr;
}

}  // namespace portcullis::net
