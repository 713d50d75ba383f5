#include "verifier-service/src/verifier_config.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/net/cidr.h"
#include "common/status/status_macros.h"

namespace portcullis::verifier {
namespace {

absl::Status Invalid(absl::string_view flag, absl::string_view env, absl::string_view text,
                     absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " (", env, "): '", text, "' is not ", expected));
}

absl::StatusOr<int64_t> ParseCount(absl::string_view flag, absl::string_view env,
                                   absl::string_view text, int64_t max) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 1 || value > max) {
    return Invalid(flag, env, text, absl::StrCat("a whole number from 1 to ", max));
  }
  return value;
}

// A listener's host:port (port 0 picks one).
absl::StatusOr<config::HostPort> ParseListen(absl::string_view flag, absl::string_view env,
                                             absl::string_view text) {
  absl::StatusOr<config::HostPort> listen = config::ParseHostPort(text, /*allow_port_zero=*/true);
  if (!listen.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " (", env, "): ", listen.status().message()));
  }
  return listen;
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view flag, absl::string_view env,
                                             absl::string_view text, bool allow_zero) {
  absl::Duration value;
  if (!absl::ParseDuration(text, &value) || value < absl::ZeroDuration() ||
      (value == absl::ZeroDuration() && !allow_zero) || value == absl::InfiniteDuration()) {
    return Invalid(flag, env, text,
                   allow_zero ? "a duration such as 0s, 5s or 250ms"
                              : "a positive duration such as 5s or 250ms");
  }
  return value;
}

}  // namespace

absl::StatusOr<VerifierConfig> BuildVerifierConfig(const VerifierFlagValues& flags) {
  VerifierConfig config;
  if (flags.database_url.empty()) {
    return absl::InvalidArgumentError(
        "--database_url (DATABASE_URL) is required: a libpq connection string or URI");
  }
  config.database_url = flags.database_url;

  ASSIGN_OR_RETURN(config.grpc_listen,
                   ParseListen("grpc_listen", "GRPC_LISTEN", flags.grpc_listen));
  config.tls.cert_file = flags.tls_cert_file;
  config.tls.key_file = flags.tls_key_file;
  config.tls.client_ca_file = flags.tls_client_ca_file;
  ASSIGN_OR_RETURN(config.tls.reload_interval,
                   ParseDuration("tls_reload_interval", "TLS_RELOAD_INTERVAL",
                                 flags.tls_reload_interval, false));
  RETURN_IF_ERROR(grpc_tls::CheckServerTlsOptions(config.tls));
  if (!flags.health_listen.empty()) {
    ASSIGN_OR_RETURN(config.health_listen,
                     ParseListen("health_listen", "HEALTH_LISTEN", flags.health_listen));
  }

  ASSIGN_OR_RETURN(const int64_t pool_size,
                   ParseCount("db_pool_size", "DB_POOL_SIZE", flags.db_pool_size, 1000));
  config.db_pool_size = static_cast<int>(pool_size);
  ASSIGN_OR_RETURN(const int64_t max_queued, ParseCount("max_queued_work", "MAX_QUEUED_WORK",
                                                        flags.max_queued_work, 1000000));
  config.max_queued_work = static_cast<size_t>(max_queued);

  ASSIGN_OR_RETURN(
      config.db_acquire_timeout,
      ParseDuration("db_acquire_timeout", "DB_ACQUIRE_TIMEOUT", flags.db_acquire_timeout, false));
  ASSIGN_OR_RETURN(config.db_statement_timeout,
                   ParseDuration("db_statement_timeout", "DB_STATEMENT_TIMEOUT",
                                 flags.db_statement_timeout, false));
  if (config.db_statement_timeout < absl::Milliseconds(1)) {
    return Invalid("db_statement_timeout", "DB_STATEMENT_TIMEOUT", flags.db_statement_timeout,
                   "at least 1ms");
  }
  ASSIGN_OR_RETURN(
      config.max_connection_age,
      ParseDuration("max_connection_age", "MAX_CONNECTION_AGE", flags.max_connection_age, false));
  ASSIGN_OR_RETURN(config.health_interval, ParseDuration("health_interval", "HEALTH_INTERVAL",
                                                         flags.health_interval, false));
  ASSIGN_OR_RETURN(config.shutdown_delay,
                   ParseDuration("shutdown_delay", "SHUTDOWN_DELAY", flags.shutdown_delay, true));
  ASSIGN_OR_RETURN(config.drain_timeout,
                   ParseDuration("drain_timeout", "DRAIN_TIMEOUT", flags.drain_timeout, false));
  ASSIGN_OR_RETURN(config.startup_timeout, ParseDuration("startup_timeout", "STARTUP_TIMEOUT",
                                                         flags.startup_timeout, false));

  const std::string& level = flags.log_level;
  if (level != "trace" && level != "debug" && level != "info" && level != "warn" &&
      level != "error" && level != "off") {
    return Invalid("log_level", "LOG_LEVEL", level, "one of trace, debug, info, warn, error, off");
  }
  config.log_level = level;
  config.migrate_only = flags.migrate_only;

  ASSIGN_OR_RETURN(config.failed_retention, ParseDuration("failed_retention", "FAILED_RETENTION",
                                                          flags.failed_retention, true));
  if (!absl::SimpleAtoi(flags.max_pending_per_source_host, &config.max_pending_per_source_host) ||
      config.max_pending_per_source_host < 0 || config.max_pending_per_source_host > 100000000) {
    return Invalid("max_pending_per_source_host", "MAX_PENDING_PER_SOURCE_HOST",
                   flags.max_pending_per_source_host, "a whole number from 0 (no limit) to 100000000");
  }
  if (!absl::SimpleAtoi(flags.max_queue_length, &config.max_queue_length) ||
      config.max_queue_length < 0 || config.max_queue_length > 1000000000) {
    return Invalid("max_queue_length", "MAX_QUEUE_LENGTH", flags.max_queue_length,
                   "a whole number from 0 (no limit) to 1000000000");
  }
  int64_t workers = 0;
  if (!absl::SimpleAtoi(flags.workers, &workers) || workers < 0 || workers > 256) {
    return Invalid("workers", "WORKERS", flags.workers, "a whole number from 0 to 256");
  }
  config.workers = static_cast<int>(workers);
  ASSIGN_OR_RETURN(config.worker_lease,
                   ParseDuration("worker_lease", "WORKER_LEASE", flags.worker_lease, false));
  if (config.worker_lease < absl::Milliseconds(300)) {
    return Invalid("worker_lease", "WORKER_LEASE", flags.worker_lease, "at least 300ms");
  }
  ASSIGN_OR_RETURN(config.worker_poll_interval,
                   ParseDuration("worker_poll_interval", "WORKER_POLL_INTERVAL",
                                 flags.worker_poll_interval, false));
  ASSIGN_OR_RETURN(config.retry_base,
                   ParseDuration("retry_base", "RETRY_BASE", flags.retry_base, false));
  ASSIGN_OR_RETURN(config.retry_cap,
                   ParseDuration("retry_cap", "RETRY_CAP", flags.retry_cap, false));
  if (config.retry_cap < config.retry_base) {
    return Invalid("retry_cap", "RETRY_CAP", flags.retry_cap, "at least --retry_base");
  }
  ASSIGN_OR_RETURN(const int64_t attempts, ParseCount("retry_max_attempts", "RETRY_MAX_ATTEMPTS",
                                                      flags.retry_max_attempts, 1000));
  config.retry_max_attempts = static_cast<int>(attempts);

  config.dns_servers = flags.dns_servers;
  ASSIGN_OR_RETURN(config.fetcher.total_timeout,
                   ParseDuration("fetch_timeout", "FETCH_TIMEOUT", flags.fetch_timeout, false));
  ASSIGN_OR_RETURN(config.fetcher.max_body_bytes,
                   ParseCount("fetch_max_body_bytes", "FETCH_MAX_BODY_BYTES",
                              flags.fetch_max_body_bytes, int64_t{1} << 30));
  int64_t redirects = 0;
  if (!absl::SimpleAtoi(flags.fetch_max_redirects, &redirects) || redirects < 0 || redirects > 20) {
    return Invalid("fetch_max_redirects", "FETCH_MAX_REDIRECTS", flags.fetch_max_redirects,
                   "a whole number from 0 to 20");
  }
  config.fetcher.max_redirects = static_cast<int>(redirects);
  ASSIGN_OR_RETURN(const int64_t per_host, ParseCount("fetch_max_per_host", "FETCH_MAX_PER_HOST",
                                                      flags.fetch_max_per_host, 10000));
  config.fetcher.max_per_host = static_cast<int>(per_host);
  ASSIGN_OR_RETURN(const int64_t in_flight, ParseCount("fetch_max_in_flight", "FETCH_MAX_IN_FLIGHT",
                                                       flags.fetch_max_in_flight, 1000000));
  config.fetcher.max_in_flight = static_cast<int>(in_flight);
  for (absl::string_view port :
       absl::StrSplit(flags.fetch_allowed_ports, absl::ByAnyChar(", "), absl::SkipEmpty())) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(port, &value) || value < 1 || value > 65535) {
      return Invalid("fetch_allowed_ports", "FETCH_ALLOWED_PORTS", flags.fetch_allowed_ports,
                     "a list of ports from 1 to 65535");
    }
    config.egress.extra_allowed_ports.push_back(static_cast<uint16_t>(value));
  }
  absl::StatusOr<std::vector<net::Cidr>> deny = net::Cidr::ParseList(flags.egress_deny_cidrs);
  if (!deny.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--egress_deny_cidrs (EGRESS_DENY_CIDRS): ", deny.status().message()));
  }
  config.egress.extra_deny = *std::move(deny);
  absl::StatusOr<std::vector<net::Cidr>> allow = net::Cidr::ParseList(flags.egress_allow_cidrs);
  if (!allow.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--egress_allow_cidrs (EGRESS_ALLOW_CIDRS): ", allow.status().message()));
  }
  config.egress.allow = *std::move(allow);
  if (!flags.admin_listen.empty()) {
    ASSIGN_OR_RETURN(config.admin_listen,
                     ParseListen("admin_listen", "ADMIN_LISTEN", flags.admin_listen));
  }
  if (flags.ingest_require_registration == "true") {
    config.ingest_require_registration = true;
  } else if (flags.ingest_require_registration == "false") {
    config.ingest_require_registration = false;
  } else {
    return Invalid("ingest_require_registration", "INGEST_REQUIRE_REGISTRATION",
                   flags.ingest_require_registration, "true or false");
  }
  ASSIGN_OR_RETURN(config.ingest_signature_tolerance,
                   ParseDuration("ingest_signature_tolerance", "INGEST_SIGNATURE_TOLERANCE",
                                 flags.ingest_signature_tolerance, false));
  if (config.ingest_signature_tolerance < absl::Seconds(1) ||
      config.ingest_signature_tolerance > absl::Hours(24)) {
    return Invalid("ingest_signature_tolerance", "INGEST_SIGNATURE_TOLERANCE",
                   flags.ingest_signature_tolerance, "from 1s to 24h");
  }
  ASSIGN_OR_RETURN(config.ingest_default_retention,
                   ParseDuration("ingest_default_retention", "INGEST_DEFAULT_RETENTION",
                                 flags.ingest_default_retention, false));
  ASSIGN_OR_RETURN(config.ingest_publisher_cache_ttl,
                   ParseDuration("ingest_publisher_cache_ttl", "INGEST_PUBLISHER_CACHE_TTL",
                                 flags.ingest_publisher_cache_ttl, true));
  ASSIGN_OR_RETURN(config.ingest_sweep_interval,
                   ParseDuration("ingest_sweep_interval", "INGEST_SWEEP_INTERVAL",
                                 flags.ingest_sweep_interval, false));
  ASSIGN_OR_RETURN(const int64_t sweep_batch, ParseCount("ingest_sweep_batch", "INGEST_SWEEP_BATCH",
                                                         flags.ingest_sweep_batch, 100000));
  config.ingest_sweep_batch = static_cast<int>(sweep_batch);
  config.tokens_file = flags.tokens_file;
  ASSIGN_OR_RETURN(config.token_refresh_interval,
                   ParseDuration("token_refresh_interval", "TOKEN_REFRESH_INTERVAL",
                                 flags.token_refresh_interval, false));
  ASSIGN_OR_RETURN(const int64_t verify_now,
                   ParseCount("verify_now_concurrency", "VERIFY_NOW_CONCURRENCY",
                              flags.verify_now_concurrency, 1000));
  config.verify_now_concurrency = static_cast<int>(verify_now);
  ASSIGN_OR_RETURN(const int64_t verifications_in_flight,
                   ParseCount("max_verifications_in_flight", "MAX_VERIFICATIONS_IN_FLIGHT",
                              flags.max_verifications_in_flight, 100000));
  config.max_verifications_in_flight = static_cast<int>(verifications_in_flight);
  config.verification.source_limits = {config.fetcher.max_redirects,
                                       config.fetcher.total_timeout,
                                       config.fetcher.max_body_bytes};
  ASSIGN_OR_RETURN(config.verification.author_limits.total_timeout,
                   ParseDuration("author_fetch_timeout", "AUTHOR_FETCH_TIMEOUT",
                                 flags.author_fetch_timeout, false));
  ASSIGN_OR_RETURN(config.verification.author_limits.max_body_bytes,
                   ParseCount("author_fetch_max_body_bytes", "AUTHOR_FETCH_MAX_BODY_BYTES",
                              flags.author_fetch_max_body_bytes, int64_t{1} << 30));
  // The author page gets at most one redirect (and never more than the fetcher allows).
  config.verification.author_limits.max_redirects = std::min(1, config.fetcher.max_redirects);
  int64_t author_cache_size = 0;
  if (!absl::SimpleAtoi(flags.author_cache_size, &author_cache_size) || author_cache_size < 0 ||
      author_cache_size > 1000000) {
    return Invalid("author_cache_size", "AUTHOR_CACHE_SIZE", flags.author_cache_size,
                   "a whole number from 0 to 1000000");
  }
  config.verification.author_cache_entries = static_cast<size_t>(author_cache_size);
  ASSIGN_OR_RETURN(config.verification.author_cache_ttl,
                   ParseDuration("author_cache_ttl", "AUTHOR_CACHE_TTL", flags.author_cache_ttl,
                                 true));
  return config;
}

}  // namespace portcullis::verifier
