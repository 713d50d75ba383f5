#pragma once

// CaresResolver: Resolver over c-ares 1.18 (`ares_getaddrinfo`, A and AAAA), driven by one event
// loop thread for every lookup (poll over the sockets c-ares reports through its socket-state
// callback; no thread per lookup).
//
// What it never does, whatever the system configuration says:
//   - search domains (ARES_FLAG_NOSEARCH, no domains): "example.com" is only example.com;
//   - /etc/hosts (lookups "b": DNS only) or HOSTALIASES (ARES_FLAG_NOALIASES);
//   - sort answers by connecting UDP sockets to them (ARES_AI_NOSORT).
// It is never handed IP literals (c-ares 1.18 would send them to DNS) nor special-use names: the
// fetch path refuses those before resolving (EgressPolicy). The address check after it is the
// real guard either way.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verifier-service/src/fetch/resolver.h"

struct ares_addrinfo;

namespace portcullis::verifier::fetch {

// What Resolve answers for a successful c-ares lookup: the A and AAAA addresses of `info` in answer
// order without duplicates, or kNotFound when there is none (nodes of another family or with a
// short address are skipped). Separate from the event loop so the DNS fuzz target can drive it.
absl::StatusOr<std::vector<net::IpAddress>> AddressesOfAnswer(const ares_addrinfo* info,
                                                              absl::string_view host);

struct CaresResolverConfig {
  // DNS servers as c-ares reads them: "host[:port]" separated by commas, IPv6 as "[::1]:53".
  // Empty: the servers of /etc/resolv.conf.
  std::string servers;
  // The whole lookup (A and AAAA, every try and server): past it the callback gets kUnavailable.
  absl::Duration timeout = absl::Seconds(2);
  // Queries sent per server before c-ares gives up (each with timeout / tries).
  int tries = 2;
  // Receive buffer of the DNS sockets: a burst of answers (a thousand lookups at once) must not
  // overflow the system default and be dropped, to be retried only after timeout / tries.
  // 0: the system default. The kernel caps it at net.core.rmem_max (often 208 KiB: raise it on
  // fetch-heavy nodes).
  int socket_receive_buffer_bytes = 1 << 20;
};

class CaresResolver final : public Resolver {
 public:
  // kInvalidArgument for a bad server list or non-positive timeout/tries; kInternal when c-ares
  // cannot be initialized. Starts the event loop thread.
  static absl::StatusOr<std::unique_ptr<CaresResolver>> Create(CaresResolverConfig config);

  // Stops the loop; lookups still running are answered kCancelled.
  ~CaresResolver() override;

  CaresResolver(const CaresResolver&) = delete;
  CaresResolver& operator=(const CaresResolver&) = delete;

  void Resolve(absl::string_view host, Callback callback) override;

 private:
  class Loop;
  explicit CaresResolver(std::unique_ptr<Loop> loop);

  std::unique_ptr<Loop> loop_;
};

}  // namespace portcullis::verifier::fetch
