#pragma once

// Cidr: an address block, "10.0.0.0/8" or "fc00::/7". Containment is integer arithmetic on the
// address bits, never a string comparison.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/ip_address.h"

namespace portcullis::net {

class Cidr {
 public:
  // Reads "ADDRESS/PREFIX" (ADDRESS as IpAddress::Parse reads it, PREFIX decimal 0..32 for IPv4
  // and 0..128 for IPv6) or a bare ADDRESS, which means the one address (/32 or /128). Refuses
  // zone ids and bits set after the prefix ("10.0.0.1/8"): a block is written as its first
  // address, so a typo cannot silently widen or move it. kInvalidArgument otherwise.
  static absl::StatusOr<Cidr> Parse(absl::string_view text);

  // Reads a list separated by commas and/or whitespace ("10.0.0.0/8, 168.63.129.16"); an empty or
  // blank list is an empty vector. Fails on the first bad entry, naming it.
  static absl::StatusOr<std::vector<Cidr>> ParseList(absl::string_view text);

  // The block of `prefix_length` leading bits of `address`; the remaining bits are cleared and
  // any zone dropped. `prefix_length` is clamped to the family's width.
  static Cidr Of(const IpAddress& address, int prefix_length);

  // The first address of the block.
  const IpAddress& network() const { return network_; }
  int prefix_length() const { return prefix_length_; }
  IpAddress::Family family() const { return network_.family(); }

  // True when `address` has the same family and its first prefix_length() bits equal the
  // block's. An IPv4 block never contains an IPv6 address (embedded IPv4 included), and the
  // other way round. Zone ids do not take part.
  bool Contains(const IpAddress& address) const;

  // "10.0.0.0/8", "fc00::/7".
  std::string ToString() const;

  friend bool operator==(const Cidr& a, const Cidr& b) = default;

 private:
  Cidr(IpAddress network, int prefix_length)
      : network_(std::move(network)), prefix_length_(prefix_length) {}

  IpAddress network_;
  int prefix_length_;
};

}  // namespace portcullis::net
