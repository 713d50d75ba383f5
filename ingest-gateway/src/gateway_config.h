#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/config/listen_address.h"
#include "common/grpc/channel_credentials.h"
#include "common/net/cidr.h"

namespace portcullis::gateway {

// The flag values as given (strings, so that a bad environment default is reported by us in
// one line, like a bad flag).
struct GatewayFlags {
  std::string http_listen = "127.0.0.1:8080";
  std::string admin_listen = "127.0.0.1:9090";
  std::string verifier = "127.0.0.1:50051";
  std::string verifier_timeout = "2s";
  std::string retry_after_seconds = "5";
  std::string io_threads = "2";
  std::string max_connections = "1024";
  std::string max_connections_per_address = "64";
  std::string max_body_bytes = "1048576";
  std::string max_header_bytes = "16384";
  std::string read_timeout = "10s";
  std::string idle_timeout = "30s";
  std::string readiness_interval = "1s";
  std::string shutdown_delay = "0s";
  std::string drain_timeout = "10s";
  std::string log_level = "info";
  std::string client_rate_limit = "120/m";
  std::string client_burst = "60";
  std::string source_host_rate_limit = "60/m";
  std::string source_host_burst = "30";
  std::string rate_limit_max_keys = "100000";
  std::string trusted_proxies;
  std::string ingest_max_body_bytes = "1048576";
  // A file holding the gateway's API token for the verifier (scopes submit,read); required.
  std::string verifier_token_file;
  // Optional (mutual) TLS to the verifier.
  std::string verifier_tls_ca_file;
  std::string verifier_tls_cert_file;
  std::string verifier_tls_key_file;
  std::string verifier_tls_server_name;
  std::string verifier_tls_reload_interval = "60s";
};

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
  // The bearer token sent on every call to the verifier, read from --verifier_token_file. Never
  // logged or exported.
  std::string verifier_token;
  // TLS to the verifier: none (plaintext), or the CA to verify it by, the name its certificate
  // must carry, and the gateway's client certificate for mutual TLS; the files are re-read every
  // reload interval. The files themselves are checked when the gateway is created.
  grpc_tls::ClientTlsOptions verifier_tls;

  // Validates `flags` and reads the token file; the error names the flag and the accepted range
  // in one line (never the token).
  static absl::StatusOr<GatewayConfig> FromFlags(const GatewayFlags& flags);
};

}  // namespace portcullis::gateway
