#include "common/net/address_policy.h"

#include "absl/strings/str_cat.h"

namespace portcullis::net {
namespace {

const Cidr* FindIn(const std::vector<Cidr>& blocks, const IpAddress& address) {
  for (const Cidr& block : blocks) {
    if (block.Contains(address)) {
      return &block;
    }
  }
  return nullptr;
}

// " (embeds 127.0.0.1, itself in loopback 127.0.0.0/8)" for embedding prefixes, else "".
std::string EmbeddedNote(const IpAddress& address) {
  const std::optional<IpAddress::EmbeddedIpv4> embedded = address.FindEmbeddedIpv4();
  if (!embedded.has_value()) {
    return "";
  }
  const IpAddress ipv4 = IpAddress::Ipv4(embedded->ipv4);
  std::string note = absl::StrCat(" (embeds ", ipv4.ToString());
  if (const SpecialRange* inner = FindRefusedRange(ipv4)) {
    absl::StrAppend(&note, ", itself in ", inner->name, " ", inner->cidr.ToString());
  }
  absl::StrAppend(&note, ")");
  return note;
}

}  // namespace

absl::string_view BasisLabel(AddressVerdict::Basis basis) {
  switch (basis) {
    case AddressVerdict::Basis::kGlobal:
      return "global";
    case AddressVerdict::Basis::kAllowList:
      return "allow_list";
    case AddressVerdict::Basis::kZoneId:
      return "zone_id";
    case AddressVerdict::Basis::kExtraDenyList:
      return "deny_list";
    case AddressVerdict::Basis::kBuiltInRange:
      return "built_in";
  }
  return "unknown";
}

AddressVerdict AddressPolicy::Classify(const IpAddress& address) const {
  AddressVerdict verdict;
  if (address.has_zone()) {
    verdict.basis = AddressVerdict::Basis::kZoneId;
    return verdict;
  }
  if (const Cidr* denied = FindIn(extra_deny_, address)) {
    verdict.basis = AddressVerdict::Basis::kExtraDenyList;
    verdict.configured = *denied;
    return verdict;
  }
  verdict.range = FindRefusedRange(address);
  if (const Cidr* allowed = FindIn(allow_, address)) {
    verdict.basis = AddressVerdict::Basis::kAllowList;
    verdict.configured = *allowed;
    return verdict;
  }
  verdict.basis = verdict.range == nullptr ? AddressVerdict::Basis::kGlobal
                                           : AddressVerdict::Basis::kBuiltInRange;
  return verdict;
}

std::string DescribeRefusal(const IpAddress& address, const AddressVerdict& verdict) {
  const std::string text = address.ToString();
  switch (verdict.basis) {
    case AddressVerdict::Basis::kZoneId:
      return absl::StrCat("address ", text, " has a zone id (%", address.zone(),
                          "): scoped addresses name an interface of this host");
    case AddressVerdict::Basis::kExtraDenyList:
      return absl::StrCat("address ", text, " is in the configured deny list block ",
                          verdict.configured.has_value() ? verdict.configured->ToString() : "?");
    case AddressVerdict::Basis::kBuiltInRange:
      if (verdict.range == nullptr) {
        break;
      }
      return absl::StrCat("address ", text, " is in ", verdict.range->name, " ",
                          verdict.range->cidr.ToString(), EmbeddedNote(address), ": ",
                          verdict.range->reason);
    case AddressVerdict::Basis::kGlobal:
    case AddressVerdict::Basis::kAllowList:
      break;
  }
  return absl::StrCat("address ", text, " is allowed");
}

absl::Status AddressPolicy::Check(const IpAddress& address) const {
  const AddressVerdict verdict = Classify(address);
  if (verdict.allowed()) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(DescribeRefusal(address, verdict));
}

}  // namespace portcullis::net
