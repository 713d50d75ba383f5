#pragma once

// IpAddress: an IPv4 or IPv6 address held as integers, never as text. Everything that decides
// whether Portcullis may connect somewhere compares these integers (see ../shared/SSRF-POLICY.md);
// text exists only to read resolver answers and to write logs.

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::url {
class Url;
}  // namespace portcullis::url

namespace portcullis::net {

class IpAddress;

// The IPv6 prefixes that carry an IPv4 address inside them.
enum class Ipv4EmbeddingKind {
  kMapped,      // ::ffff:0:0/96, RFC 4291 §2.5.5.2
  kTranslated,  // ::ffff:0:0:0/96, RFC 2765 (SIIT)
  kCompatible,  // ::/96 except :: and ::1, RFC 4291 §2.5.5.1 (deprecated)
  kNat64,       // 64:ff9b::/96, RFC 6052
  kNat64Local,  // 64:ff9b:1::/48, RFC 8215 (RFC 6052 §2.2 layout for a /48 prefix)
  k6to4,        // 2002::/16, RFC 3056: bits 16..47
  kTeredo,      // 2001::/32, RFC 4380: client address is the bitwise NOT of the last 32 bits
};

// "IPv4-mapped", "NAT64", "Teredo", ... for logs and metric labels.
absl::string_view Ipv4EmbeddingName(Ipv4EmbeddingKind kind);

class IpAddress {
 public:
  enum class Family { kIpv4, kIpv6 };

  // An IPv4 address from its host-order integer (0x7f000001 is 127.0.0.1).
  static IpAddress Ipv4(uint32_t address);
  // An IPv6 address from its eight 16-bit groups, most significant first, with an optional zone
  // id ("eth0", or a numeric scope id as text). A zone makes an address unfit to fetch from.
  static IpAddress Ipv6(const std::array<uint16_t, 8>& groups, std::string zone = {});

  // Reads an address the way resolvers and socket APIs write one:
  //   - IPv4: dotted quad only, four decimal parts 0..255 without leading zeros. The other
  //     spellings ("127.1", "0x7f.1", "0177.0.0.1", "2130706433") are URL-host syntax, which
  //     FromUrl takes from the WHATWG parser; here they are errors.
  //   - IPv6: RFC 4291 §2.2 text (hex groups, one "::", a trailing dotted quad), case-insensitive,
  //     optionally followed by "%zone" (RFC 4007), which is kept so that policy can refuse it.
  // No brackets, no ports, no surrounding spaces. kInvalidArgument otherwise.
  static absl::StatusOr<IpAddress> Parse(absl::string_view text);

  // The address of an IP-literal URL host; nullopt when the host is a domain name.
  static std::optional<IpAddress> FromUrl(const url::Url& url);

  // The address in a sockaddr_in / sockaddr_in6 (as a connect-time callback sees it); a non-zero
  // sin6_scope_id becomes the zone (its decimal text). nullopt for other families or short lengths.
  static std::optional<IpAddress> FromSockaddr(const sockaddr* address, socklen_t length);

  Family family() const { return family_; }
  bool is_ipv4() const { return family_ == Family::kIpv4; }
  bool is_ipv6() const { return family_ == Family::kIpv6; }

  // Host-order IPv4 value; 0 for IPv6 addresses.
  uint32_t ipv4() const { return ipv4_; }
  // The eight IPv6 groups; all zero for IPv4 addresses.
  const std::array<uint16_t, 8>& ipv6() const { return ipv6_; }
  // The 128 IPv6 bits as two halves (for prefix arithmetic); 0 for IPv4 addresses.
  uint64_t ipv6_high() const {
    return (uint64_t{ipv6_[0]} << 48) | (uint64_t{ipv6_[1]} << 32) | (uint64_t{ipv6_[2]} << 16) |
           uint64_t{ipv6_[3]};
  }
  uint64_t ipv6_low() const {
    return (uint64_t{ipv6_[4]} << 48) | (uint64_t{ipv6_[5]} << 32) | (uint64_t{ipv6_[6]} << 16) |
           uint64_t{ipv6_[7]};
  }
  // The IPv6 zone id without "%"; empty when absent (always for IPv4).
  const std::string& zone() const { return zone_; }
  bool has_zone() const { return !zone_.empty(); }

  // Canonical text: dotted decimal for IPv4; RFC 5952 for IPv6 (lowercase, no leading zeros,
  // the longest run of two or more zero groups as "::", the first such run on a tie), written in
  // hex throughout — "::ffff:7f00:1", as the WHATWG URL serializer writes it — plus "%zone".
  std::string ToString() const;

  // The IPv4 address inside an embedding IPv6 prefix, for logs and metrics; nullopt for IPv4
  // addresses and IPv6 addresses outside those prefixes. Policy refuses these prefixes whatever
  // they carry; the decoded address only says what the sender was aiming at.
  struct EmbeddedIpv4 {
    Ipv4EmbeddingKind kind;
    uint32_t ipv4;
  };
  std::optional<EmbeddedIpv4> FindEmbeddedIpv4() const;

  friend bool operator==(const IpAddress& a, const IpAddress& b) = default;

 private:
  IpAddress() = default;

  Family family_ = Family::kIpv4;
  uint32_t ipv4_ = 0;
  std::array<uint16_t, 8> ipv6_{};
  std::string zone_;
};

// Dotted-decimal text of a host-order IPv4 value.
std::string Ipv4ToString(uint32_t address);

}  // namespace portcullis::net
