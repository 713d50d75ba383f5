#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/net/cidr.h"

// Admission of new connections to the HTTP server: a cap on all open connections, and one on the
// open connections of each peer address, so that one client cannot take every slot of the total
// cap. Plain counting, no I/O and no lock: the server calls it under its own lock.
namespace portcullis::gateway::http {

struct ConnectionLimitsOptions {
  // All open connections counted.
  size_t max_total = 1024;
  // Open connections of one address (an IPv4 address, or the /64 of an IPv6 address, which one
  // host usually has whole); 0: no per-address cap.
  size_t max_per_address = 64;
  // Peers never capped per address: reverse proxies and load balancers carry many clients. They
  // still count against max_total.
  std::vector<net::Cidr> exempt;
};

class ConnectionLimits {
 public:
  enum class Verdict {
    kAdmitted,
    kOverAddressLimit,  // the peer's address already has max_per_address open
    kOverTotalLimit,    // max_total are open
  };

  // What an admitted connection holds until it is given back with Release (exactly once, on
  // every path it closes by). A refused connection holds nothing; Release of it does nothing.
  struct Slot {
    bool counted = false;
    // The per-address key counted ("" when the peer is exempt or the cap is off).
    std::string address_key;
  };

  explicit ConnectionLimits(ConnectionLimitsOptions options);

  // Admits or refuses a connection from `peer` as the server names it ("ip:port" or
  // "[ipv6]:port"; anything unparseable is its own address). On kAdmitted, `slot` is counted.
  // The per-address cap is checked first: a peer over it is told so even when the server is
  // full as well.
  Verdict Admit(absl::string_view peer, Slot* slot);
  void Release(Slot* slot);

  // Connections counted now.
  size_t open() const { return open_; }
  // Counted connections of the address of `peer` ("ip:port").
  size_t open_from(absl::string_view peer) const;
  // Addresses with at least one counted connection: never more than max_total, since an address
  // is forgotten when its last connection closes.
  size_t addresses() const { return per_address_.size(); }

 private:
  // The per-address key of `peer`, or "" when it is exempt or the cap is off.
  std::string AddressKey(absl::string_view peer) const;

  const ConnectionLimitsOptions options_;
  size_t open_ = 0;
  std::unordered_map<std::string, size_t> per_address_;
};

}  // namespace portcullis::gateway::http
