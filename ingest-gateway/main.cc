// ingest-gateway: the public HTTP front of Portcullis. Parses flags, builds the config, wires the
// gateway, serves until SIGTERM/SIGINT, drains, exits 0.
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/clock.h"
#include "common/config/env.h"
#include "common/config/flag_spelling.h"
#include "common/lifecycle/termination_signal.h"
#include "common/logging/log.h"
#include "ingest-gateway/src/gateway.h"
#include "ingest-gateway/src/gateway_config.h"

using portcullis::config::EnvOr;

ABSL_FLAG(std::string, http_listen, EnvOr("HTTP_LISTEN", "127.0.0.1:8080"),
          "host:port of the public HTTP listener (port 0: any free port) [HTTP_LISTEN]");
ABSL_FLAG(std::string, admin_listen, EnvOr("ADMIN_LISTEN", "127.0.0.1:9090"),
          "host:port of the admin listener: /healthz, /readyz, /metrics [ADMIN_LISTEN]");
ABSL_FLAG(std::string, verifier, EnvOr("VERIFIER_ADDRESS", "127.0.0.1:50051"),
          "gRPC target of the verifier, e.g. dns:///verifier-service-headless:50051 "
          "[VERIFIER_ADDRESS]");
ABSL_FLAG(std::string, verifier_timeout, EnvOr("VERIFIER_TIMEOUT", "2s"),
          "deadline of every call to the verifier [VERIFIER_TIMEOUT]");
ABSL_FLAG(std::string, retry_after_seconds, EnvOr("RETRY_AFTER_SECONDS", "5"),
          "Retry-After of 503 and 429 answers, in seconds [RETRY_AFTER_SECONDS]");
ABSL_FLAG(std::string, io_threads, EnvOr("IO_THREADS", "2"),
          "threads serving HTTP connections [IO_THREADS]");
ABSL_FLAG(std::string, max_connections, EnvOr("MAX_CONNECTIONS", "1024"),
          "open connections beyond this are answered 503 and closed [MAX_CONNECTIONS]");
ABSL_FLAG(std::string, max_connections_per_address, EnvOr("MAX_CONNECTIONS_PER_ADDRESS", "64"),
          "open connections of one client address (IPv6: per /64) beyond this are answered 429 "
          "and closed; 0 turns it off; --trusted_proxies are exempt "
          "[MAX_CONNECTIONS_PER_ADDRESS]");
ABSL_FLAG(std::string, max_body_bytes, EnvOr("MAX_BODY_BYTES", "1048576"),
          "largest request body (POST /webmention is capped at 64 KiB) [MAX_BODY_BYTES]");
ABSL_FLAG(std::string, max_header_bytes, EnvOr("MAX_HEADER_BYTES", "16384"),
          "largest request header [MAX_HEADER_BYTES]");
ABSL_FLAG(std::string, read_timeout, EnvOr("READ_TIMEOUT", "10s"),
          "time to send one request, header and body [READ_TIMEOUT]");
ABSL_FLAG(std::string, idle_timeout, EnvOr("IDLE_TIMEOUT", "30s"),
          "time a keep-alive connection may wait for its next request [IDLE_TIMEOUT]");
ABSL_FLAG(std::string, readiness_interval, EnvOr("READINESS_INTERVAL", "1s"),
          "how often the verifier's health is checked [READINESS_INTERVAL]");
ABSL_FLAG(std::string, shutdown_delay, EnvOr("SHUTDOWN_DELAY", "0s"),
          "after SIGTERM, time to keep serving while /readyz says 503 [SHUTDOWN_DELAY]");
ABSL_FLAG(std::string, drain_timeout, EnvOr("DRAIN_TIMEOUT", "10s"),
          "time for requests in progress to finish at shutdown [DRAIN_TIMEOUT]");
ABSL_FLAG(std::string, log_level, EnvOr("LOG_LEVEL", "info"),
          "trace, debug, info, warn, error or off [LOG_LEVEL]");

ABSL_FLAG(std::string, client_rate_limit, EnvOr("CLIENT_RATE_LIMIT", "120/m"),
          "webmention requests per client address (IPv6: per /64), as N/s, N/m or N/h; 0 turns "
          "it off; over it: 429 + Retry-After. Counted per gateway pod [CLIENT_RATE_LIMIT]");
ABSL_FLAG(std::string, client_burst, EnvOr("CLIENT_BURST", "60"),
          "requests a client address may send at once after a quiet period [CLIENT_BURST]");
ABSL_FLAG(std::string, source_host_rate_limit, EnvOr("SOURCE_HOST_RATE_LIMIT", "60/m"),
          "webmentions per source host, as N/s, N/m or N/h; 0 turns it off; counted per gateway "
          "pod [SOURCE_HOST_RATE_LIMIT]");
ABSL_FLAG(std::string, source_host_burst, EnvOr("SOURCE_HOST_BURST", "30"),
          "webmentions one source host may send at once after a quiet period [SOURCE_HOST_BURST]");
ABSL_FLAG(std::string, rate_limit_max_keys, EnvOr("RATE_LIMIT_MAX_KEYS", "100000"),
          "addresses (and, separately, source hosts) tracked at most; idle ones are forgotten "
          "first [RATE_LIMIT_MAX_KEYS]");

ABSL_FLAG(std::string, trusted_proxies, EnvOr("TRUSTED_PROXIES", ""),
          "reverse proxies (CIDRs, comma separated) whose X-Forwarded-For names the client for "
          "the per-client rate limit; empty: the peer address is the client [TRUSTED_PROXIES]");
ABSL_FLAG(std::string, ingest_max_body_bytes, EnvOr("INGEST_MAX_BODY_BYTES", "1048576"),
          "largest POST /ingest body, at most 1 MiB; larger ones are answered 413 "
          "[INGEST_MAX_BODY_BYTES]");

ABSL_FLAG(std::string, verifier_token_file, EnvOr("VERIFIER_TOKEN_FILE", ""),
          "required: a file holding the API token (scopes submit,read) sent to the verifier on "
          "every call; surrounding whitespace is ignored [VERIFIER_TOKEN_FILE]");
ABSL_FLAG(std::string, verifier_tls_ca_file, EnvOr("VERIFIER_TLS_CA_FILE", ""),
          "PEM CA certificates the verifier's certificate must chain to; turns TLS to the "
          "verifier on; empty: plaintext [VERIFIER_TLS_CA_FILE]");
ABSL_FLAG(std::string, verifier_tls_cert_file, EnvOr("VERIFIER_TLS_CERT_FILE", ""),
          "PEM client certificate presented to the verifier (mutual TLS), with "
          "--verifier_tls_key_file [VERIFIER_TLS_CERT_FILE]");
ABSL_FLAG(std::string, verifier_tls_key_file, EnvOr("VERIFIER_TLS_KEY_FILE", ""),
          "PEM private key of --verifier_tls_cert_file [VERIFIER_TLS_KEY_FILE]");
ABSL_FLAG(std::string, verifier_tls_server_name, EnvOr("VERIFIER_TLS_SERVER_NAME", ""),
          "name the verifier's certificate must carry (SAN); empty: the host of --verifier "
          "[VERIFIER_TLS_SERVER_NAME]");
ABSL_FLAG(std::string, verifier_tls_reload_interval, EnvOr("VERIFIER_TLS_RELOAD_INTERVAL", "60s"),
          "how often the TLS files are read again, so renewed certificates are used without a "
          "restart; at least 1s [VERIFIER_TLS_RELOAD_INTERVAL]");

int main(int argc, char** argv) {
  portcullis::lifecycle::BlockTerminationSignals();
  portcullis::config::AcceptDashedFlagNames(argc, argv);
  absl::SetProgramUsageMessage("The Portcullis ingest gateway (HTTP front of the verifier).");
  absl::ParseCommandLine(argc, argv);

  portcullis::gateway::GatewayFlags flags;
  flags.http_listen = absl::GetFlag(FLAGS_http_listen);
  flags.admin_listen = absl::GetFlag(FLAGS_admin_listen);
  flags.verifier = absl::GetFlag(FLAGS_verifier);
  flags.verifier_timeout = absl::GetFlag(FLAGS_verifier_timeout);
  flags.retry_after_seconds = absl::GetFlag(FLAGS_retry_after_seconds);
  flags.io_threads = absl::GetFlag(FLAGS_io_threads);
  flags.max_connections = absl::GetFlag(FLAGS_max_connections);
  flags.max_connections_per_address = absl::GetFlag(FLAGS_max_connections_per_address);
  flags.max_body_bytes = absl::GetFlag(FLAGS_max_body_bytes);
  flags.max_header_bytes = absl::GetFlag(FLAGS_max_header_bytes);
  flags.read_timeout = absl::GetFlag(FLAGS_read_timeout);
  flags.idle_timeout = absl::GetFlag(FLAGS_idle_timeout);
  flags.readiness_interval = absl::GetFlag(FLAGS_readiness_interval);
  flags.shutdown_delay = absl::GetFlag(FLAGS_shutdown_delay);
  flags.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  flags.log_level = absl::GetFlag(FLAGS_log_level);
  flags.client_rate_limit = absl::GetFlag(FLAGS_client_rate_limit);
  flags.client_burst = absl::GetFlag(FLAGS_client_burst);
  flags.source_host_rate_limit = absl::GetFlag(FLAGS_source_host_rate_limit);
  flags.source_host_burst = absl::GetFlag(FLAGS_source_host_burst);
  flags.rate_limit_max_keys = absl::GetFlag(FLAGS_rate_limit_max_keys);
  flags.trusted_proxies = absl::GetFlag(FLAGS_trusted_proxies);
  flags.ingest_max_body_bytes = absl::GetFlag(FLAGS_ingest_max_body_bytes);
  flags.verifier_token_file = absl::GetFlag(FLAGS_verifier_token_file);
  flags.verifier_tls_ca_file = absl::GetFlag(FLAGS_verifier_tls_ca_file);
  flags.verifier_tls_cert_file = absl::GetFlag(FLAGS_verifier_tls_cert_file);
  flags.verifier_tls_key_file = absl::GetFlag(FLAGS_verifier_tls_key_file);
  flags.verifier_tls_server_name = absl::GetFlag(FLAGS_verifier_tls_server_name);
  flags.verifier_tls_reload_interval = absl::GetFlag(FLAGS_verifier_tls_reload_interval);

  const absl::StatusOr<portcullis::gateway::GatewayConfig> config =
      portcullis::gateway::GatewayConfig::FromFlags(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "ingest-gateway: %s\n", std::string(config.status().message()).c_str());
    return 2;
  }
  if (absl::Status logging = portcullis::logging::Init("ingest-gateway", config->log_level);
      !logging.ok()) {
    std::fprintf(stderr, "ingest-gateway: %s\n", std::string(logging.message()).c_str());
    return 2;
  }

  absl::StatusOr<std::unique_ptr<portcullis::gateway::Gateway>> gateway =
      portcullis::gateway::Gateway::Create(*config);
  if (!gateway.ok()) {
    portcullis::logging::Error("{}", std::string(gateway.status().message()));
    return 1;
  }
  (*gateway)->Start();
  portcullis::logging::Info("listening http={} admin={} verifier={}", (*gateway)->http_address(),
                            (*gateway)->admin_address(), config->verifier_target);

  const int signal = portcullis::lifecycle::WaitForTerminationSignal();
  portcullis::logging::Info("signal {} received: draining", signal);
  (*gateway)->BeginShutdown();
  if (config->shutdown_delay > absl::ZeroDuration()) {
    absl::SleepFor(config->shutdown_delay);
  }
  const bool drained = (*gateway)->Drain(absl::Now() + config->drain_timeout);
  portcullis::logging::Info("stopped ({})",
                            drained ? "all connections finished" : "drain deadline passed");
  gateway->reset();
  return 0;
}
