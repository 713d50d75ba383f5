#include "common/net/cidr.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace portcullis::net {
namespace {

int Width(IpAddress::Family family) { return family == IpAddress::Family::kIpv4 ? 32 : 128; }

uint32_t Mask32(int prefix_length) {
  return prefix_length <= 0 ? 0u : ~uint32_t{0} << (32 - prefix_length);
}

uint64_t Mask64(int prefix_length) {
  if (prefix_length <= 0) {
    return 0;
  }
  if (prefix_length >= 64) {
    return ~uint64_t{0};
  }
  return ~uint64_t{0} << (64 - prefix_length);
}

IpAddress Masked(const IpAddress& address, int prefix_length) {
  if (address.is_ipv4()) {
    return IpAddress::Ipv4(address.ipv4() & Mask32(prefix_length));
  }
  const uint64_t high = address.ipv6_high() & Mask64(prefix_length);
  const uint64_t low = address.ipv6_low() & Mask64(prefix_length - 64);
  std::array<uint16_t, 8> groups{};
  for (size_t k = 0; k < 4; ++k) {
    groups[k] = static_cast<uint16_t>(high >> (48 - 16 * k));
    groups[k + 4] = static_cast<uint16_t>(low >> (48 - 16 * k));
  }
  return IpAddress::Ipv6(groups);
}

}  // namespace

absl::StatusOr<Cidr> Cidr::Parse(absl::string_view text) {
  const size_t slash = text.find('/');
  absl::StatusOr<IpAddress> address = IpAddress::Parse(text.substr(0, slash));
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a CIDR block: \"", text, "\": ", address.status().message()));
  }
  if (address->has_zone()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a CIDR block: \"", text, "\": zone ids are not allowed"));
  }
  const int width = Width(address->family());
  int prefix_length = width;
  if (slash != absl::string_view::npos) {
    const absl::string_view prefix = text.substr(slash + 1);
    const bool digits_only = !prefix.empty() && prefix.size() <= 3 &&
                             prefix.find_first_not_of("0123456789") == absl::string_view::npos &&
                             (prefix.size() == 1 || prefix[0] != '0');
    if (!digits_only || !absl::SimpleAtoi(prefix, &prefix_length) || prefix_length > width) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a CIDR block: \"", text, "\": prefix length must be 0..", width));
    }
  }
  Cidr cidr(Masked(*address, prefix_length), prefix_length);
  if (!(cidr.network_ == *address)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a CIDR block: \"", text, "\": bits set after the /", prefix_length,
                     " prefix (did you mean ", cidr.ToString(), "?)"));
  }
  return cidr;
}

absl::StatusOr<std::vector<Cidr>> Cidr::ParseList(absl::string_view text) {
  std::vector<Cidr> result;
  for (const absl::string_view entry :
       absl::StrSplit(text, absl::ByAnyChar(", \t\n\r"), absl::SkipEmpty())) {
    absl::StatusOr<Cidr> cidr = Parse(entry);
    if (!cidr.ok()) {
      return cidr.status();
    }
    result.push_back(*std::move(cidr));
  }
  return result;
}

Cidr Cidr::Of(const IpAddress& address, int prefix_length) {
  const int width = Width(address.family());
  const int clamped = prefix_length < 0 ? 0 : (prefix_length > width ? width : prefix_length);
  return Cidr(Masked(address, clamped), clamped);
}

bool Cidr::Contains(const IpAddress& address) const {
  if (address.family() != network_.family()) {
    return false;
  }
  if (address.is_ipv4()) {
    return ((address.ipv4() ^ network_.ipv4()) & Mask32(prefix_length_)) == 0;
  }
  return ((address.ipv6_high() ^ network_.ipv6_high()) & Mask64(prefix_length_)) == 0 &&
         ((address.ipv6_low() ^ network_.ipv6_low()) & Mask64(prefix_length_ - 64)) == 0;
}

std::string Cidr::ToString() const {
  return absl::StrCat(network_.ToString(), "/", prefix_length_);
}

}  // namespace portcullis::net
