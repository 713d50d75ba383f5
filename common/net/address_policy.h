#pragma once

// AddressPolicy: may Portcullis connect to this address? The built-in tables of
// special_ranges.h, plus two configured lists on top:
//   - an extra deny list (cloud-specific public addresses such as 168.63.129.16), always applied;
//   - an allow list, for tests and demos only (loopback origins), empty by default. It overrides
//     the built-in tables for addresses inside one of its blocks, never the extra deny list.
// An IPv6 address with a zone id is always refused: a scoped address names an interface of this
// host, not a place on the internet.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/net/cidr.h"
#include "common/net/ip_address.h"
#include "common/net/special_ranges.h"

namespace portcullis::net {

// What decided an address, for the refusal message and for metric labels.
struct AddressVerdict {
  enum class Basis {
    kGlobal,         // allowed: in no refused block
    kAllowList,      // allowed: inside an allow-list block (tests and demos)
    kZoneId,         // refused: has a zone id
    kExtraDenyList,  // refused: inside a configured deny-list block
    kBuiltInRange,   // refused: inside a block of special_ranges.h
  };

  Basis basis = Basis::kGlobal;
  // The built-in block, for kBuiltInRange (also filled for kAllowList: the block that was
  // overridden, when there was one).
  const SpecialRange* range = nullptr;
  // The configured block, for kExtraDenyList and kAllowList.
  std::optional<Cidr> configured;

  bool allowed() const { return basis == Basis::kGlobal || basis == Basis::kAllowList; }
};

// Short stable label for metrics: "global", "allow_list", "zone_id", "deny_list", "built_in".
absl::string_view BasisLabel(AddressVerdict::Basis basis);

class AddressPolicy {
 public:
  // The built-in tables only.
  AddressPolicy() = default;
  AddressPolicy(std::vector<Cidr> extra_deny, std::vector<Cidr> allow)
      : extra_deny_(std::move(extra_deny)), allow_(std::move(allow)) {}

  AddressVerdict Classify(const IpAddress& address) const;

  // OK, or PermissionDenied explaining the refusal: the address, the block's name and CIDR, the
  // IPv4 address it embeds (for the embedding prefixes) and the reason, e.g.
  //   address ::ffff:7f00:1 is in IPv4-mapped ::ffff:0:0/96 (embeds 127.0.0.1, itself in
  //   loopback 127.0.0.0/8): IPv4 embedding; reaches the embedded IPv4 address
  absl::Status Check(const IpAddress& address) const;

  // True when an allow list is configured: the service logs a loud warning at startup.
  bool has_allow_list() const { return !allow_.empty(); }
  const std::vector<Cidr>& allow_list() const { return allow_; }
  const std::vector<Cidr>& extra_deny_list() const { return extra_deny_; }

 private:
  std::vector<Cidr> extra_deny_;
  std::vector<Cidr> allow_;
};

// The refusal text for a verdict that is not allowed() (Check's message without the status).
std::string DescribeRefusal(const IpAddress& address, const AddressVerdict& verdict);

}  // namespace portcullis::net
