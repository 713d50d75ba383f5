// verifier-service: parses flags, builds the config, wires the server and runs it until SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/config/env.h"
#include "common/config/flag_spelling.h"
#include "common/lifecycle/termination_signal.h"
#include "common/logging/log.h"
#include "verifier-service/src/server/verifier_server.h"
#include "verifier-service/src/verifier_config.h"

using portcullis::config::EnvOr;

ABSL_FLAG(std::string, database_url, EnvOr("DATABASE_URL", ""),
          "PostgreSQL libpq connection string or URI (env DATABASE_URL). Required.");
ABSL_FLAG(std::string, grpc_listen, EnvOr("GRPC_LISTEN", "127.0.0.1:50051"),
          "host:port the gRPC server listens on; port 0 picks one (env GRPC_LISTEN).");
ABSL_FLAG(std::string, tls_cert_file, EnvOr("TLS_CERT_FILE", ""),
          "PEM certificate chain of the gRPC port; with --tls_key_file turns TLS on; re-read every "
          "--tls_reload_interval (env TLS_CERT_FILE).");
ABSL_FLAG(std::string, tls_key_file, EnvOr("TLS_KEY_FILE", ""),
          "PEM private key of --tls_cert_file (env TLS_KEY_FILE).");
ABSL_FLAG(std::string, tls_client_ca_file, EnvOr("TLS_CLIENT_CA_FILE", ""),
          "PEM CA certificates of the clients: every client must then present a certificate "
          "they issued (mutual TLS); needs --tls_cert_file (env TLS_CLIENT_CA_FILE).");
ABSL_FLAG(std::string, tls_reload_interval, EnvOr("TLS_RELOAD_INTERVAL", "60s"),
          "How often the TLS files are read again, so renewed certificates are served without a "
          "restart; at least 1s (env TLS_RELOAD_INTERVAL).");
ABSL_FLAG(std::string, health_listen, EnvOr("HEALTH_LISTEN", ""),
          "host:port of a plaintext gRPC port serving grpc.health.v1 only, for probes that "
          "cannot use TLS (Kubernetes grpc probes); empty: none (env HEALTH_LISTEN).");
ABSL_FLAG(std::string, db_pool_size, EnvOr("DB_POOL_SIZE", "8"),
          "Database connections and database threads at most (env DB_POOL_SIZE).");
ABSL_FLAG(std::string, db_acquire_timeout, EnvOr("DB_ACQUIRE_TIMEOUT", "2s"),
          "Longest wait for a free database connection (env DB_ACQUIRE_TIMEOUT).");
ABSL_FLAG(std::string, db_statement_timeout, EnvOr("DB_STATEMENT_TIMEOUT", "5s"),
          "PostgreSQL statement_timeout (env DB_STATEMENT_TIMEOUT).");
ABSL_FLAG(std::string, max_queued_work, EnvOr("MAX_QUEUED_WORK", "1024"),
          "Requests waiting for a database thread at most; beyond, UNAVAILABLE "
          "(env MAX_QUEUED_WORK).");
ABSL_FLAG(std::string, max_connection_age, EnvOr("MAX_CONNECTION_AGE", "5m"),
          "gRPC connections are closed after this long so clients rebalance "
          "(env MAX_CONNECTION_AGE).");
ABSL_FLAG(std::string, health_interval, EnvOr("HEALTH_INTERVAL", "1s"),
          "How often health pings the database (env HEALTH_INTERVAL).");
ABSL_FLAG(std::string, shutdown_delay, EnvOr("SHUTDOWN_DELAY", "0s"),
          "On SIGTERM, NOT_SERVING for this long before closing (env SHUTDOWN_DELAY).");
ABSL_FLAG(std::string, drain_timeout, EnvOr("DRAIN_TIMEOUT", "10s"),
          "On SIGTERM, time in-flight calls get to finish (env DRAIN_TIMEOUT).");
ABSL_FLAG(std::string, startup_timeout, EnvOr("STARTUP_TIMEOUT", "60s"),
          "With --migrate_only, how long to keep trying to reach the database "
          "(env STARTUP_TIMEOUT).");
ABSL_FLAG(std::string, log_level, EnvOr("LOG_LEVEL", "info"),
          "trace, debug, info, warn, error or off (env LOG_LEVEL).");
ABSL_FLAG(bool, migrate_only, false, "Apply database migrations and exit.");
ABSL_FLAG(std::string, failed_retention, EnvOr("FAILED_RETENTION", "24h"),
          "A FAILED mention submitted again within this time is left alone; later it starts over "
          "as PENDING (env FAILED_RETENTION).");
ABSL_FLAG(std::string, max_pending_per_source_host, EnvOr("MAX_PENDING_PER_SOURCE_HOST", "1000"),
          "A new mention is refused (RESOURCE_EXHAUSTED: the gateway answers 429 + Retry-After) "
          "while this many mentions from its source host are PENDING; 0: no limit "
          "(env MAX_PENDING_PER_SOURCE_HOST).");
ABSL_FLAG(std::string, max_queue_length, EnvOr("MAX_QUEUE_LENGTH", "100000"),
          "A new mention is refused (UNAVAILABLE: the gateway answers 503 + Retry-After) while "
          "this many verification jobs are queued; 0: no limit (env MAX_QUEUE_LENGTH).");
ABSL_FLAG(std::string, workers, EnvOr("WORKERS", "8"),
          "Verification worker threads: they claim jobs, start verifications (which then wait "
          "for their source without holding a thread; see --max_verifications_in_flight) and "
          "record outcomes; 0 queues mentions without verifying them (env WORKERS).");
ABSL_FLAG(std::string, worker_lease, EnvOr("WORKER_LEASE", "30s"),
          "Lease of a claimed verification job; a dead worker's jobs are taken over after it "
          "(env WORKER_LEASE).");
ABSL_FLAG(std::string, worker_poll_interval, EnvOr("WORKER_POLL_INTERVAL", "30s"),
          "Longest idle wait of a worker without a LISTEN/NOTIFY wake-up "
          "(env WORKER_POLL_INTERVAL).");
ABSL_FLAG(std::string, retry_base, EnvOr("RETRY_BASE", "30s"),
          "Delay before retrying a transiently failed verification, doubling per attempt, "
          "with jitter (env RETRY_BASE).");
ABSL_FLAG(std::string, retry_cap, EnvOr("RETRY_CAP", "1h"), "Longest retry delay (env RETRY_CAP).");
ABSL_FLAG(std::string, retry_max_attempts, EnvOr("RETRY_MAX_ATTEMPTS", "8"),
          "Attempts before a transiently failing mention is FAILED 'unreachable' "
          "(env RETRY_MAX_ATTEMPTS).");
ABSL_FLAG(std::string, dns_servers, EnvOr("DNS_SERVERS", ""),
          "DNS servers of the fetcher, host[:port] separated by commas; empty uses "
          "/etc/resolv.conf (env DNS_SERVERS).");
ABSL_FLAG(std::string, fetch_timeout, EnvOr("FETCH_TIMEOUT", "5s"),
          "Longest fetch, every hop and lookup included; SafeFetch callers get at most this "
          "(env FETCH_TIMEOUT).");
ABSL_FLAG(std::string, fetch_max_body_bytes, EnvOr("FETCH_MAX_BODY_BYTES", "1048576"),
          "Largest decoded body fetched; SafeFetch callers get at most this "
          "(env FETCH_MAX_BODY_BYTES).");
ABSL_FLAG(std::string, fetch_max_redirects, EnvOr("FETCH_MAX_REDIRECTS", "3"),
          "Redirects followed at most; SafeFetch callers get at most this "
          "(env FETCH_MAX_REDIRECTS).");
ABSL_FLAG(std::string, fetch_allowed_ports, EnvOr("FETCH_ALLOWED_PORTS", ""),
          "Ports the fetcher may connect to besides 80 and 443, separated by commas "
          "(env FETCH_ALLOWED_PORTS).");
ABSL_FLAG(std::string, egress_deny_cidrs, EnvOr("EGRESS_DENY_CIDRS", ""),
          "Address blocks refused besides the built-in ones, e.g. 168.63.129.16/32 "
          "(env EGRESS_DENY_CIDRS).");
ABSL_FLAG(std::string, egress_allow_cidrs, EnvOr("EGRESS_ALLOW_CIDRS", ""),
          "Address blocks allowed despite the built-in ones: tests and demos ONLY, logged loudly "
          "at startup; empty in production (env EGRESS_ALLOW_CIDRS).");
ABSL_FLAG(std::string, fetch_max_per_host, EnvOr("FETCH_MAX_PER_HOST", "2"),
          "Fetches to one host in flight at once; more wait (env FETCH_MAX_PER_HOST).");
ABSL_FLAG(std::string, admin_listen, EnvOr("ADMIN_LISTEN", ""),
          "host:port serving GET /metrics (Prometheus text); port 0 picks one; empty: no admin "
          "listener (env ADMIN_LISTEN).");
ABSL_FLAG(std::string, verify_now_concurrency, EnvOr("VERIFY_NOW_CONCURRENCY", "4"),
          "VerifyNow calls verifying at once; more wait, up to 64, then UNAVAILABLE "
          "(env VERIFY_NOW_CONCURRENCY).");
ABSL_FLAG(std::string, max_verifications_in_flight, EnvOr("MAX_VERIFICATIONS_IN_FLIGHT", "1000"),
          "Queue verifications in flight at once (fetching or analyzing, not yet recorded); "
          "they hold no thread while they wait for a source, so slow sources do not delay fast "
          "ones (env MAX_VERIFICATIONS_IN_FLIGHT).");
ABSL_FLAG(std::string, author_fetch_timeout, EnvOr("AUTHOR_FETCH_TIMEOUT", "2s"),
          "Longest fetch of a rel=author page (at most --fetch_timeout; env AUTHOR_FETCH_TIMEOUT).");
ABSL_FLAG(std::string, author_fetch_max_body_bytes, EnvOr("AUTHOR_FETCH_MAX_BODY_BYTES", "262144"),
          "Largest rel=author page read (at most --fetch_max_body_bytes; "
          "env AUTHOR_FETCH_MAX_BODY_BYTES).");
ABSL_FLAG(std::string, author_cache_size, EnvOr("AUTHOR_CACHE_SIZE", "1024"),
          "rel=author pages remembered; 0 fetches every time (env AUTHOR_CACHE_SIZE).");
ABSL_FLAG(std::string, author_cache_ttl, EnvOr("AUTHOR_CACHE_TTL", "10m"),
          "How long a rel=author page's author is remembered (env AUTHOR_CACHE_TTL).");
ABSL_FLAG(std::string, fetch_max_in_flight, EnvOr("FETCH_MAX_IN_FLIGHT", "1000"),
          "Fetches in flight at once; more wait (env FETCH_MAX_IN_FLIGHT).");
ABSL_FLAG(std::string, ingest_require_registration, EnvOr("INGEST_REQUIRE_REGISTRATION", "true"),
          "true: deliveries from an unknown or disabled publisher are refused (403); false: they "
          "are evaluated as an unverified publisher without keys "
          "(env INGEST_REQUIRE_REGISTRATION).");
ABSL_FLAG(std::string, ingest_signature_tolerance, EnvOr("INGEST_SIGNATURE_TOLERANCE", "300s"),
          "Accepted distance between a provenance signature's timestamp and now, both ways "
          "(env INGEST_SIGNATURE_TOLERANCE).");
ABSL_FLAG(std::string, ingest_default_retention, EnvOr("INGEST_DEFAULT_RETENTION", "72h"),
          "How long ingest decisions are kept for de-duplication when the publisher sets no "
          "retention (env INGEST_DEFAULT_RETENTION).");
ABSL_FLAG(std::string, ingest_publisher_cache_ttl, EnvOr("INGEST_PUBLISHER_CACHE_TTL", "5s"),
          "How long a publisher and its keys are cached; 0s disables the cache "
          "(env INGEST_PUBLISHER_CACHE_TTL).");
ABSL_FLAG(std::string, ingest_sweep_interval, EnvOr("INGEST_SWEEP_INTERVAL", "1m"),
          "How often expired ingest decisions are deleted (env INGEST_SWEEP_INTERVAL).");
ABSL_FLAG(std::string, ingest_sweep_batch, EnvOr("INGEST_SWEEP_BATCH", "500"),
          "Expired ingest decisions deleted per statement at most (env INGEST_SWEEP_BATCH).");

ABSL_FLAG(std::string, tokens_file, EnvOr("TOKENS_FILE", ""),
          "File of static API tokens, one a line: <sha256 hex of the token> <name> <scopes> "
          "[<site>,...]; merged with the tokens in the database; empty: the database only "
          "(env TOKENS_FILE).");
ABSL_FLAG(std::string, token_refresh_interval, EnvOr("TOKEN_REFRESH_INTERVAL", "10s"),
          "How often the API tokens are read again from the database: a token created or "
          "revoked on another verifier takes effect here within it (env TOKEN_REFRESH_INTERVAL).");

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Fail(int code, absl::string_view message) {
  std::fprintf(stderr, "verifier-service: %.*s\n", static_cast<int>(message.size()),
               message.data());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  portcullis::lifecycle::BlockTerminationSignals();
  portcullis::config::AcceptDashedFlagNames(argc, argv);
  absl::SetProgramUsageMessage("Portcullis verifier: receives and verifies webmentions.");
  absl::ParseCommandLine(argc, argv);

  portcullis::verifier::VerifierFlagValues flags;
  flags.database_url = absl::GetFlag(FLAGS_database_url);
  flags.grpc_listen = absl::GetFlag(FLAGS_grpc_listen);
  flags.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  flags.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  flags.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  flags.tls_reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  flags.health_listen = absl::GetFlag(FLAGS_health_listen);
  flags.db_pool_size = absl::GetFlag(FLAGS_db_pool_size);
  flags.db_acquire_timeout = absl::GetFlag(FLAGS_db_acquire_timeout);
  flags.db_statement_timeout = absl::GetFlag(FLAGS_db_statement_timeout);
  flags.max_queued_work = absl::GetFlag(FLAGS_max_queued_work);
  flags.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  flags.health_interval = absl::GetFlag(FLAGS_health_interval);
  flags.shutdown_delay = absl::GetFlag(FLAGS_shutdown_delay);
  flags.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  flags.startup_timeout = absl::GetFlag(FLAGS_startup_timeout);
  flags.log_level = absl::GetFlag(FLAGS_log_level);
  flags.migrate_only = absl::GetFlag(FLAGS_migrate_only);
  flags.failed_retention = absl::GetFlag(FLAGS_failed_retention);
  flags.max_pending_per_source_host = absl::GetFlag(FLAGS_max_pending_per_source_host);
  flags.max_queue_length = absl::GetFlag(FLAGS_max_queue_length);
  flags.workers = absl::GetFlag(FLAGS_workers);
  flags.worker_lease = absl::GetFlag(FLAGS_worker_lease);
  flags.worker_poll_interval = absl::GetFlag(FLAGS_worker_poll_interval);
  flags.retry_base = absl::GetFlag(FLAGS_retry_base);
  flags.retry_cap = absl::GetFlag(FLAGS_retry_cap);
  flags.retry_max_attempts = absl::GetFlag(FLAGS_retry_max_attempts);
  flags.dns_servers = absl::GetFlag(FLAGS_dns_servers);
  flags.fetch_timeout = absl::GetFlag(FLAGS_fetch_timeout);
  flags.fetch_max_body_bytes = absl::GetFlag(FLAGS_fetch_max_body_bytes);
  flags.fetch_max_redirects = absl::GetFlag(FLAGS_fetch_max_redirects);
  flags.fetch_allowed_ports = absl::GetFlag(FLAGS_fetch_allowed_ports);
  flags.egress_deny_cidrs = absl::GetFlag(FLAGS_egress_deny_cidrs);
  flags.egress_allow_cidrs = absl::GetFlag(FLAGS_egress_allow_cidrs);
  flags.fetch_max_per_host = absl::GetFlag(FLAGS_fetch_max_per_host);
  flags.fetch_max_in_flight = absl::GetFlag(FLAGS_fetch_max_in_flight);
  flags.admin_listen = absl::GetFlag(FLAGS_admin_listen);
  flags.verify_now_concurrency = absl::GetFlag(FLAGS_verify_now_concurrency);
  flags.max_verifications_in_flight = absl::GetFlag(FLAGS_max_verifications_in_flight);
  flags.author_fetch_timeout = absl::GetFlag(FLAGS_author_fetch_timeout);
  flags.author_fetch_max_body_bytes = absl::GetFlag(FLAGS_author_fetch_max_body_bytes);
  flags.author_cache_size = absl::GetFlag(FLAGS_author_cache_size);
  flags.author_cache_ttl = absl::GetFlag(FLAGS_author_cache_ttl);
  flags.ingest_require_registration = absl::GetFlag(FLAGS_ingest_require_registration);
  flags.ingest_signature_tolerance = absl::GetFlag(FLAGS_ingest_signature_tolerance);
  flags.ingest_default_retention = absl::GetFlag(FLAGS_ingest_default_retention);
  flags.ingest_publisher_cache_ttl = absl::GetFlag(FLAGS_ingest_publisher_cache_ttl);
  flags.ingest_sweep_interval = absl::GetFlag(FLAGS_ingest_sweep_interval);
  flags.ingest_sweep_batch = absl::GetFlag(FLAGS_ingest_sweep_batch);
  flags.tokens_file = absl::GetFlag(FLAGS_tokens_file);
  flags.token_refresh_interval = absl::GetFlag(FLAGS_token_refresh_interval);
  const absl::StatusOr<portcullis::verifier::VerifierConfig> config =
      portcullis::verifier::BuildVerifierConfig(flags);
  if (!config.ok()) {
    return Fail(kExitUsage, config.status().message());
  }
  if (absl::Status status = portcullis::logging::Init("verifier", config->log_level);
      !status.ok()) {
    return Fail(kExitUsage, status.message());
  }

  if (config->migrate_only) {
    const absl::Status status = portcullis::verifier::server::MigrateWithRetry(
        config->database_url, config->startup_timeout);
    if (!status.ok()) {
      return Fail(kExitFailure, status.message());
    }
    return 0;
  }

  absl::StatusOr<std::unique_ptr<portcullis::verifier::server::VerifierServer>> server =
      portcullis::verifier::server::VerifierServer::Start(
          *config, [] { kill(getpid(), SIGTERM); });  // Give up: run the shutdown below.
  if (!server.ok()) {
    // A bad DNS server list or fetch limit is a misconfiguration, like a bad flag.
    return Fail(absl::IsInvalidArgument(server.status()) ? kExitUsage : kExitFailure,
                server.status().message());
  }
  const int signal_number = portcullis::lifecycle::WaitForTerminationSignal();
  portcullis::logging::Info("received signal={}", signal_number);
  (*server)->Shutdown();
  if (const absl::Status fatal = (*server)->fatal_error(); !fatal.ok()) {
    return Fail(kExitFailure, fatal.message());
  }
  return 0;
}
