#include "common/net/ip_address.h"

#include <netinet/in.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/url/url.h"
#include "common/encoding/hex.h"

namespace portcullis::net {
namespace {

absl::Status Invalid(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("not an IP address: \"", text, "\": ", why));
}

bool IsDecimalDigit(char c) { return c >= '0' && c <= '9'; }

// Strict dotted quad: exactly four decimal parts, each 0..255, no leading zeros, no sign.
std::optional<uint32_t> ParseDottedQuad(absl::string_view text) {
  uint32_t address = 0;
  int parts = 0;
  size_t i = 0;
  while (true) {
    const size_t start = i;
    uint32_t part = 0;
    while (i < text.size() && IsDecimalDigit(text[i])) {
      part = part * 10 + static_cast<uint32_t>(text[i] - '0');
      if (part > 255) {
        return std::nullopt;
      }
      ++i;
    }
    const size_t length = i - start;
    if (length == 0 || (length > 1 && text[start] == '0')) {
      return std::nullopt;
    }
    address = (address << 8) | part;
    ++parts;
    if (i == text.size()) {
      break;
    }
    if (text[i] != '.' || parts == 4) {
      return std::nullopt;
    }
    ++i;
  }
  if (parts != 4) {
    return std::nullopt;
  }
  return address;
}

// RFC 4291 §2.2 text without a zone.
absl::StatusOr<std::array<uint16_t, 8>> ParseIpv6Groups(absl::string_view text,
                                                        absl::string_view whole) {
  std::array<uint16_t, 8> before{};
  std::array<uint16_t, 8> after{};
  int before_count = 0;
  int after_count = 0;
  bool compressed = false;
  size_t i = 0;
  if (text.substr(0, 2) == "::") {
    compressed = true;
    i = 2;
  } else if (!text.empty() && text[0] == ':') {
    return Invalid(whole, "leading single colon");
  }
  while (i < text.size()) {
    const int count = before_count + after_count;
    if (count >= 8) {
      return Invalid(whole, "more than eight groups");
    }
    // A trailing dotted quad fills the last two groups.
    const size_t next_colon = text.find(':', i);
    const absl::string_view rest = text.substr(
        i, next_colon == absl::string_view::npos ? absl::string_view::npos : next_colon - i);
    if (next_colon == absl::string_view::npos && rest.find('.') != absl::string_view::npos) {
      const std::optional<uint32_t> v4 = ParseDottedQuad(rest);
      if (!v4.has_value()) {
        return Invalid(whole, "bad embedded IPv4 part");
      }
      if (count > 6) {
        return Invalid(whole, "embedded IPv4 part leaves no room");
      }
      auto& groups = compressed ? after : before;
      int& n = compressed ? after_count : before_count;
      groups[n++] = static_cast<uint16_t>(*v4 >> 16);
      groups[n++] = static_cast<uint16_t>(*v4 & 0xffff);
      i = text.size();
      break;
    }
    uint32_t group = 0;
    size_t digits = 0;
    while (i < text.size() && encoding::HexDigitValue(text[i]) >= 0) {
      group = (group << 4) | static_cast<uint32_t>(encoding::HexDigitValue(text[i]));
      ++digits;
      ++i;
    }
    if (digits == 0) {
      return Invalid(whole, "empty or non-hex group");
    }
    if (digits > 4) {
      return Invalid(whole, "group longer than four hex digits");
    }
    auto& groups = compressed ? after : before;
    int& n = compressed ? after_count : before_count;
    groups[n++] = static_cast<uint16_t>(group);
    if (i == text.size()) {
      break;
    }
    if (text[i] != ':') {
      return Invalid(whole, "unexpected character");
    }
    ++i;
    if (i < text.size() && text[i] == ':') {
      if (compressed) {
        return Invalid(whole, "more than one \"::\"");
      }
      compressed = true;
      ++i;
    } else if (i == text.size()) {
      return Invalid(whole, "trailing single colon");
    }
  }
  const int total = before_count + after_count;
  if (compressed ? total > 7 : total != 8) {
    return Invalid(whole, compressed ? "\"::\" stands for no group" : "fewer than eight groups");
  }
  std::array<uint16_t, 8> groups{};
  for (int k = 0; k < before_count; ++k) {
    groups[static_cast<size_t>(k)] = before[static_cast<size_t>(k)];
  }
  for (int k = 0; k < after_count; ++k) {
    groups[static_cast<size_t>(8 - after_count + k)] = after[static_cast<size_t>(k)];
  }
  return groups;
}

bool IsZoneCharacter(char c) {
  // RFC 6874 ZoneID = 1*( unreserved / pct-encoded ); interface names and numeric scope ids are
  // unreserved characters in practice.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDecimalDigit(c) || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

uint32_t Bits32(const std::array<uint16_t, 8>& g, size_t high_group) {
  return (static_cast<uint32_t>(g[high_group]) << 16) | g[high_group + 1];
}

}  // namespace

absl::string_view Ipv4EmbeddingName(Ipv4EmbeddingKind kind) {
  switch (kind) {
    case Ipv4EmbeddingKind::kMapped:
      return "IPv4-mapped";
    case Ipv4EmbeddingKind::kTranslated:
      return "IPv4-translated";
    case Ipv4EmbeddingKind::kCompatible:
      return "IPv4-compatible";
    case Ipv4EmbeddingKind::kNat64:
      return "NAT64";
    case Ipv4EmbeddingKind::kNat64Local:
      return "local-use NAT64";
    case Ipv4EmbeddingKind::k6to4:
      return "6to4";
    case Ipv4EmbeddingKind::kTeredo:
      return "Teredo";
  }
  return "unknown embedding";
}

IpAddress IpAddress::Ipv4(uint32_t address) {
  IpAddress result;
  result.family_ = Family::kIpv4;
  result.ipv4_ = address;
  return result;
}

IpAddress IpAddress::Ipv6(const std::array<uint16_t, 8>& groups, std::string zone) {
  IpAddress result;
  result.family_ = Family::kIpv6;
  result.ipv6_ = groups;
  result.zone_ = std::move(zone);
  return result;
}

absl::StatusOr<IpAddress> IpAddress::Parse(absl::string_view text) {
  if (text.empty()) {
    return Invalid(text, "empty");
  }
  if (text.find(':') == absl::string_view::npos) {
    const std::optional<uint32_t> v4 = ParseDottedQuad(text);
    if (!v4.has_value()) {
      return Invalid(text, "IPv4 must be a dotted quad of decimal 0..255 without leading zeros");
    }
    return Ipv4(*v4);
  }
  absl::string_view body = text;
  std::string zone;
  if (const size_t percent = text.find('%'); percent != absl::string_view::npos) {
    const absl::string_view zone_text = text.substr(percent + 1);
    if (zone_text.empty()) {
      return Invalid(text, "empty zone id");
    }
    for (const char c : zone_text) {
      if (!IsZoneCharacter(c)) {
        return Invalid(text, "bad character in zone id");
      }
    }
    zone = std::string(zone_text);
    body = text.substr(0, percent);
  }
  absl::StatusOr<std::array<uint16_t, 8>> groups = ParseIpv6Groups(body, text);
  if (!groups.ok()) {
    return groups.status();
  }
  return Ipv6(*groups, std::move(zone));
}

std::optional<IpAddress> IpAddress::FromUrl(const url::Url& url) {
  switch (url.host_kind()) {
    case url::Url::HostKind::kIpv4:
      if (url.ipv4().has_value()) {
        return Ipv4(*url.ipv4());
      }
      return std::nullopt;
    case url::Url::HostKind::kIpv6:
      if (url.ipv6().has_value()) {
        return Ipv6(*url.ipv6());
      }
      return std::nullopt;
    case url::Url::HostKind::kDomain:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<IpAddress> IpAddress::FromSockaddr(const sockaddr* address, socklen_t length) {
  if (address == nullptr) {
    return std::nullopt;
  }
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof(in));
    return Ipv4(ntohl(in.sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address, sizeof(in6));
    std::array<uint16_t, 8> groups{};
    for (size_t k = 0; k < 8; ++k) {
      groups[k] = static_cast<uint16_t>((in6.sin6_addr.s6_addr[2 * k] << 8) |
                                        in6.sin6_addr.s6_addr[2 * k + 1]);
    }
    return Ipv6(groups, in6.sin6_scope_id == 0 ? std::string() : absl::StrCat(in6.sin6_scope_id));
  }
  return std::nullopt;
}

std::string IpAddress::ToString() const {
  if (is_ipv4()) {
    return Ipv4ToString(ipv4_);
  }
  std::string text = url::SerializeIpv6(ipv6_);
  if (has_zone()) {
    absl::StrAppend(&text, "%", zone_);
  }
  return text;
}

std::optional<IpAddress::EmbeddedIpv4> IpAddress::FindEmbeddedIpv4() const {
  if (!is_ipv6()) {
    return std::nullopt;
  }
  const std::array<uint16_t, 8>& g = ipv6_;
  const bool first_four_zero = g[0] == 0 && g[1] == 0 && g[2] == 0 && g[3] == 0;
  if (first_four_zero && g[4] == 0 && g[5] == 0xffff) {
    return EmbeddedIpv4{Ipv4EmbeddingKind::kMapped, Bits32(g, 6)};
  }
  if (first_four_zero && g[4] == 0xffff && g[5] == 0) {
    return EmbeddedIpv4{Ipv4EmbeddingKind::kTranslated, Bits32(g, 6)};
  }
  if (first_four_zero && g[4] == 0 && g[5] == 0 && Bits32(g, 6) > 1) {
    // :: and ::1 are the unspecified and loopback addresses, not embeddings.
    return EmbeddedIpv4{Ipv4EmbeddingKind::kCompatible, Bits32(g, 6)};
  }
  if (g[0] == 0x64 && g[1] == 0xff9b && g[2] == 0 && g[3] == 0 && g[4] == 0 && g[5] == 0) {
    return EmbeddedIpv4{Ipv4EmbeddingKind::kNat64, Bits32(g, 6)};
  }
  if (g[0] == 0x64 && g[1] == 0xff9b && g[2] == 1) {
    // RFC 6052 §2.2, /48 prefix: IPv4 bits 0..15 at bits 48..63, the "u" octet at bits 64..71,
    // IPv4 bits 16..31 at bits 72..87.
    const uint32_t high = g[3];
    const uint32_t low = ((static_cast<uint32_t>(g[4]) & 0xff) << 8) | (g[5] >> 8);
    return EmbeddedIpv4{Ipv4EmbeddingKind::kNat64Local, (high << 16) | low};
  }
  if (g[0] == 0x2002) {
    return EmbeddedIpv4{Ipv4EmbeddingKind::k6to4, Bits32(g, 1)};
  }
  if (g[0] == 0x2001 && g[1] == 0) {
    return EmbeddedIpv4{Ipv4EmbeddingKind::kTeredo, ~Bits32(g, 6)};
  }
  return std::nullopt;
}

std::string Ipv4ToString(uint32_t address) { return url::SerializeIpv4(address); }

}  // namespace portcullis::net
