#include "ingest-gateway/src/http/connection_limits.h"

#include <utility>

#include "absl/status/statusor.h"
#include "common/net/ip_address.h"
#include "ingest-gateway/src/rate_limiter.h"

namespace portcullis::gateway::http {

ConnectionLimits::ConnectionLimits(ConnectionLimitsOptions options)
    : options_(std::move(options)) {}

std::string ConnectionLimits::AddressKey(absl::string_view peer) const {
  if (options_.max_per_address == 0) {
    return "";
  }
  if (const absl::StatusOr<net::IpAddress> address = PeerAddress(peer); address.ok()) {
    for (const net::Cidr& block : options_.exempt) {
      if (block.Contains(*address)) {
        return "";
      }
    }
  }
  // The same key as the per-client rate limit: an IPv4 address, an IPv6 /64.
  return ClientKey(peer);
}

ConnectionLimits::Verdict ConnectionLimits::Admit(absl::string_view peer, Slot* slot) {
  *slot = Slot{};
  std::string key = AddressKey(peer);
  if (!key.empty()) {
    const auto it = per_address_.find(key);
    if (it != per_address_.end() && it->second >= options_.max_per_address) {
      return Verdict::kOverAddressLimit;
    }
  }
  if (open_ >= options_.max_total) {
    return Verdict::kOverTotalLimit;
  }
  ++open_;
  if (!key.empty()) {
    ++per_address_[key];
  }
  slot->counted = true;
  slot->address_key = std::move(key);
  return Verdict::kAdmitted;
}

void ConnectionLimits::Release(Slot* slot) {
  if (!slot->counted) {
    return;
  }
  slot->counted = false;
  --open_;
  if (slot->address_key.empty()) {
    return;
  }
  const auto it = per_address_.find(slot->address_key);
  if (it != per_address_.end() && --it->second == 0) {
    per_address_.erase(it);
  }
  slot->address_key.clear();
}

size_t ConnectionLimits::open_from(absl::string_view peer) const {
  const std::string key = AddressKey(peer);
  if (key.empty()) {
    return 0;
  }
  const auto it = per_address_.find(key);
  return it == per_address_.end() ? 0 : it->second;
}

}  // namespace portcullis::gateway::http
