#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/listen_address.h"
#include "common/config/setting.h"
#include "common/grpc/channel_credentials.h"
#include "common/net/cidr.h"
#include "ingest-gateway/src/avatar_cache.h"

namespace portcullis::gateway {

// Every limit and timeout of the gateway, validated once at startup.
struct GatewayConfig {
  config::HostPort http_listen;
  config::HostPort admin_listen;
  std::string verifier_target;
  absl::Duration verifier_timeout;
  int retry_after_seconds;
  int io_threads;
  size_t max_connections;
  // Open connections of one client address (IPv6: per /64) over this: 429 and closed; 0: off.
  // Peers in trusted_proxies are exempt.
  size_t max_connections_per_address = 64;
  uint64_t max_body_bytes;
  uint32_t max_header_bytes;
  absl::Duration read_timeout;
  absl::Duration idle_timeout;
  absl::Duration write_timeout;
  absl::Duration readiness_interval;
  absl::Duration shutdown_delay;
  absl::Duration drain_timeout;
  std::string log_level;
  // Token buckets of the webmention routes, per client address and per source host (rate 0:
  // off), and how many buckets each keeps at most.
  double client_rate_per_second = 0;
  double client_burst = 1;
  double source_host_rate_per_second = 0;
  double source_host_burst = 1;
  size_t rate_limit_max_keys = 100000;
  // Reverse proxies whose X-Forwarded-For names the client for the per-client limit.
  std::vector<net::Cidr> trusted_proxies;
  // The body cap of POST /ingest (413 above it); at most 1 MiB, what EvaluateIngest carries.
  uint64_t ingest_max_body_bytes = 1024 * 1024;
  // How long the gateway answers repeats of an accepted item itself (IngestHandler::Options); at
  // most the verifier's publisher lookup cache (5 s), so that disabling a publisher shows no
  // later than it did; zero: every repeat asks the verifier.
  absl::Duration ingest_duplicate_cache_ttl = absl::Seconds(2);
  // The bearer token sent on every call to the verifier, read from --verifier_token_file. Never
  // logged or exported.
  std::string verifier_token;
  // TLS to the verifier: none (plaintext), or the CA to verify it by, the name its certificate
  // must carry, and the gateway's client certificate for mutual TLS; the files are re-read every
  // reload interval. The files themselves are checked when the gateway is created.
  grpc_tls::ClientTlsOptions verifier_tls;
  // Where the public feeds point proxied author photos: "<public_base_url>/avatar/<hash>"
  // (absolute, no trailing '/'); empty: a path relative to the gateway.
  std::string public_base_url;
  // The avatar proxy's in-memory cache (issue 17).
  AvatarCacheLimits avatar_cache;

  // Sets every gateway setting (gateway_config.cc) from `command_line` (by flag name, as
  // config::ParseCommandLine returns it), else its environment variable, else its default, then
  // reads the token file; the error names the flag (and its variable) and the accepted range in
  // one line (never the token).
  static absl::StatusOr<GatewayConfig> FromFlags(const config::Texts& command_line,
                                                 const config::EnvLookup& env = &std::getenv);
};

}  // namespace portcullis::gateway
