#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/net/cidr.h"
#include "common/net/ip_address.h"

// Token buckets for the public routes: per client address and per source host. They live in the
// gateway, in memory, per pod: a 429 must cost nothing downstream (no gRPC call, no database
// write), which is the point of refusing. With N gateway pods a sender gets at most N times the
// configured rate.
namespace portcullis::gateway {

// A sustained rate and a burst; a rate of zero turns the limit off.
struct TokenBucketOptions {
  double tokens_per_second = 0;
  double burst = 1;  // Bucket size: requests allowed at once after a quiet period.

  bool enabled() const { return tokens_per_second > 0; }
};

// Reads "N/s", "N/m" or "N/h" (N a positive number) or "0" (off). InvalidArgument otherwise.
absl::StatusOr<double> ParseRate(absl::string_view text);

// Token buckets keyed by a string (a client address, a host). Memory is bounded: at most
// `max_keys` buckets; full (idle) buckets are dropped first when the table is full. Time is
// passed in, so tests need no clock. Thread-safe.
class RateLimiter {
 public:
  RateLimiter(TokenBucketOptions options, size_t max_keys);

  // Takes a token for `key` at `now`: zero when one was there, otherwise how long until the next
  // one (nothing is taken then). Always zero when the limiter is disabled.
  absl::Duration Acquire(absl::string_view key, absl::Time now);

  // Buckets currently kept (tests and metrics).
  size_t tracked_keys() const;

 private:
  struct Bucket {
    double tokens;
    absl::Time updated;
  };

  // Drops buckets that have refilled completely by `now`; if that frees less than a tenth of the
  // table, drops the least recently updated ones until it does.
  void Evict(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TokenBucketOptions options_;
  const size_t max_keys_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

// The address of a peer as the HTTP server names it ("ip:port", "[ipv6]:port").
absl::StatusOr<net::IpAddress> PeerAddress(absl::string_view client_address);

// The rate-limit key of a peer as the HTTP server names it ("ip:port", "[ipv6]:port"): the IPv4
// address, or the /64 of an IPv6 address (one host usually has a whole /64). Unparseable text is
// its own key.
std::string ClientKey(absl::string_view client_address);

// The same behind reverse proxies: when the peer is in `trusted_proxies`, the client is the
// rightmost address of `forwarded_for` (X-Forwarded-For) that is not itself a trusted proxy —
// the one a trusted proxy saw connect; entries left of it are the client's own claims and are
// ignored. The peer's key when the peer is not trusted, the header is absent, or the entry to use
// is not an IP address.
std::string ClientKey(absl::string_view client_address,
                      std::optional<absl::string_view> forwarded_for,
                      absl::Span<const net::Cidr> trusted_proxies);

// The host of `source` as the verifier reads it (WHATWG parser: lowercase, IDNA); nullopt when
// `source` is not an http(s) URL (the verifier rejects it anyway).
std::optional<std::string> SourceHostKey(absl::string_view source);

}  // namespace portcullis::gateway
