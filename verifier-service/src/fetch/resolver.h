#pragma once

// Resolver: a host name to the addresses a fetch may then be checked against and pinned to. The
// interface where DNS starts; CaresResolver is the real one, tests use fakes.

#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/net/ip_address.h"

namespace portcullis::verifier::fetch {

class Resolver {
 public:
  // Every A and AAAA answer for the name, in answer order, without duplicates (never empty), or:
  //   kNotFound     the name does not exist or has no A/AAAA records (NXDOMAIN, NODATA);
  //   kUnavailable  a transient failure: SERVFAIL, REFUSED, no answer before the timeout;
  //   kInvalidArgument  a name DNS cannot carry;
  //   kCancelled    the resolver shut down first.
  using Callback = absl::AnyInvocable<void(absl::StatusOr<std::vector<net::IpAddress>>) &&>;

  virtual ~Resolver() = default;

  // Looks `host` up: a serialized URL domain (lowercase ASCII, already accepted by
  // EgressPolicy::CheckUrl), never an IP literal — those are connected to directly. Calls
  // `callback` exactly once, on any thread (possibly before Resolve returns); the callback must
  // not block.
  virtual void Resolve(absl::string_view host, Callback callback) = 0;
};

}  // namespace portcullis::verifier::fetch
