// The verifier's settings, each declared once: flag, type, environment variable, default and
// validation (common/config/setting.h); and the one step that builds the VerifierConfig from them.
//
// STYLE.md has flags defined only in main.cc. These 64 are the exception: with their help texts
// they are some 190 lines, and main.cc is to stay a short read (parse, build, run, shut down), so
// they live here, beside the config they fill, in a library only main and its tests link.
#include "verifier-service/src/verifier_flags.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/config/setting.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/intake/target_rules.h"

namespace {

namespace config = portcullis::config;

// A count from 1 to `max`.
template <typename T>
config::Parser<T> Count(int64_t max) {
  return config::WholeNumber<T>(1, max, absl::StrCat("a whole number from 1 to ", max));
}

config::Parser<absl::Duration> Positive() {
  return config::DurationParser(false, "a positive duration such as 5s or 250ms");
}

config::Parser<absl::Duration> ZeroOrMore() {
  return config::DurationParser(true, "a duration such as 0s, 5s or 250ms");
}

}  // namespace

PORTCULLIS_SETTING(std::string, database_url, "DATABASE_URL", "", config::AnyText(),
                   "PostgreSQL libpq connection string or URI (env DATABASE_URL). Required.");
PORTCULLIS_SETTING(config::HostPort, grpc_listen, "GRPC_LISTEN", "127.0.0.1:50051",
                   config::Listen(),
                   "host:port the gRPC server listens on; port 0 picks one (env GRPC_LISTEN).");
PORTCULLIS_SETTING(
    std::string, tls_cert_file, "TLS_CERT_FILE", "", config::AnyText(),
    "PEM certificate chain of the gRPC port; with --tls_key_file turns TLS on; re-read every "
    "--tls_reload_interval (env TLS_CERT_FILE).");
PORTCULLIS_SETTING(std::string, tls_key_file, "TLS_KEY_FILE", "", config::AnyText(),
                   "PEM private key of --tls_cert_file (env TLS_KEY_FILE).");
PORTCULLIS_SETTING(
    std::string, tls_client_ca_file, "TLS_CLIENT_CA_FILE", "", config::AnyText(),
    "PEM CA certificates of the clients: every client must then present a certificate "
    "they issued (mutual TLS); needs --tls_cert_file (env TLS_CLIENT_CA_FILE).");
PORTCULLIS_SETTING(
    absl::Duration, tls_reload_interval, "TLS_RELOAD_INTERVAL", "60s", Positive(),
    "How often the TLS files are read again, so renewed certificates are served without a "
    "restart; at least 1s (env TLS_RELOAD_INTERVAL).");
PORTCULLIS_SETTING(
    std::optional<config::HostPort>, health_listen, "HEALTH_LISTEN", "", config::OptionalListen(),
    "host:port of a plaintext gRPC port serving grpc.health.v1 only, for probes that "
    "cannot use TLS (Kubernetes grpc probes); empty: none (env HEALTH_LISTEN).");
PORTCULLIS_SETTING(int, db_pool_size, "DB_POOL_SIZE", "8", Count<int>(1000),
                   "Database connections and database threads at most (env DB_POOL_SIZE).");
PORTCULLIS_SETTING(absl::Duration, db_acquire_timeout, "DB_ACQUIRE_TIMEOUT", "2s", Positive(),
                   "Longest wait for a free database connection (env DB_ACQUIRE_TIMEOUT).");
PORTCULLIS_SETTING(absl::Duration, db_statement_timeout, "DB_STATEMENT_TIMEOUT", "5s",
                   Positive().Check([](absl::Duration d) { return d >= absl::Milliseconds(1); },
                                    "at least 1ms"),
                   "PostgreSQL statement_timeout (env DB_STATEMENT_TIMEOUT).");
PORTCULLIS_SETTING(size_t, max_queued_work, "MAX_QUEUED_WORK", "1024", Count<size_t>(1000000),
                   "Requests waiting for a database thread at most; beyond, UNAVAILABLE "
                   "(env MAX_QUEUED_WORK).");
PORTCULLIS_SETTING(int, submit_writers, "SUBMIT_WRITERS", "2",
                   config::WholeNumber<int>(1, 64, "a whole number from 1 to 64"),
                   "Threads writing submissions in batches, as many for webmentions as for "
                   "ingest decisions, each with a database connection of its own beside "
                   "--db_pool_size (env SUBMIT_WRITERS).");
PORTCULLIS_SETTING(absl::Duration, max_connection_age, "MAX_CONNECTION_AGE", "5m", Positive(),
                   "gRPC connections are closed after this long so clients rebalance "
                   "(env MAX_CONNECTION_AGE).");
PORTCULLIS_SETTING(absl::Duration, health_interval, "HEALTH_INTERVAL", "1s", Positive(),
                   "How often health pings the database (env HEALTH_INTERVAL).");
PORTCULLIS_SETTING(absl::Duration, shutdown_delay, "SHUTDOWN_DELAY", "0s", ZeroOrMore(),
                   "On SIGTERM, NOT_SERVING for this long before closing (env SHUTDOWN_DELAY).");
PORTCULLIS_SETTING(absl::Duration, drain_timeout, "DRAIN_TIMEOUT", "10s", Positive(),
                   "On SIGTERM, time in-flight calls get to finish (env DRAIN_TIMEOUT).");
PORTCULLIS_SETTING(absl::Duration, startup_timeout, "STARTUP_TIMEOUT", "60s", Positive(),
                   "With --migrate_only, how long to keep trying to reach the database "
                   "(env STARTUP_TIMEOUT).");
PORTCULLIS_SETTING(std::string, log_level, "LOG_LEVEL", "info",
                   config::OneOf({"trace", "debug", "info", "warn", "error", "off"},
                                 "one of trace, debug, info, warn, error, off"),
                   "trace, debug, info, warn, error or off (env LOG_LEVEL).");
PORTCULLIS_SETTING(bool, migrate_only, nullptr, "false", config::AnyBool(),
                   "Apply database migrations and exit.");
PORTCULLIS_SETTING(
    absl::Duration, failed_retention, "FAILED_RETENTION", "24h", ZeroOrMore(),
    "A FAILED mention submitted again within this time is left alone; later it starts over "
    "as PENDING (env FAILED_RETENTION).");
PORTCULLIS_SETTING(
    int64_t, max_pending_per_source_host, "MAX_PENDING_PER_SOURCE_HOST", "1000",
    config::WholeNumber<int64_t>(0, 100000000, "a whole number from 0 (no limit) to 100000000"),
    "A new mention is refused (RESOURCE_EXHAUSTED: the gateway answers 429 + Retry-After) "
    "while this many mentions from its source host are PENDING; 0: no limit "
    "(env MAX_PENDING_PER_SOURCE_HOST).");
PORTCULLIS_SETTING(
    int64_t, max_queue_length, "MAX_QUEUE_LENGTH", "100000",
    config::WholeNumber<int64_t>(0, 1000000000, "a whole number from 0 (no limit) to 1000000000"),
    "A new mention is refused (UNAVAILABLE: the gateway answers 503 + Retry-After) while "
    "this many verification jobs are queued; 0: no limit (env MAX_QUEUE_LENGTH).");
PORTCULLIS_SETTING(
    int, workers, "WORKERS", "8", config::WholeNumber<int>(0, 256, "a whole number from 0 to 256"),
    "Verification worker threads: they claim jobs, start verifications (which then wait "
    "for their source without holding a thread; see --max_verifications_in_flight) and "
    "record outcomes; 0 queues mentions without verifying them (env WORKERS).");
PORTCULLIS_SETTING(
    absl::Duration, worker_lease, "WORKER_LEASE", "30s",
    Positive().Check([](absl::Duration d) { return d >= absl::Milliseconds(300); },
                     "at least 300ms"),
    "Lease of a claimed verification job; a dead worker's jobs are taken over after it "
    "(env WORKER_LEASE).");
PORTCULLIS_SETTING(absl::Duration, worker_poll_interval, "WORKER_POLL_INTERVAL", "30s", Positive(),
                   "Longest idle wait of a worker without a LISTEN/NOTIFY wake-up "
                   "(env WORKER_POLL_INTERVAL).");
PORTCULLIS_SETTING(absl::Duration, retry_base, "RETRY_BASE", "30s", Positive(),
                   "Delay before retrying a transiently failed verification, doubling per attempt, "
                   "with jitter (env RETRY_BASE).");
PORTCULLIS_SETTING(absl::Duration, retry_cap, "RETRY_CAP", "1h", Positive(),
                   "Longest retry delay (env RETRY_CAP).");
PORTCULLIS_SETTING(int, retry_max_attempts, "RETRY_MAX_ATTEMPTS", "8", Count<int>(1000),
                   "Attempts before a transiently failing mention is FAILED 'unreachable' "
                   "(env RETRY_MAX_ATTEMPTS).");
PORTCULLIS_SETTING(std::string, dns_servers, "DNS_SERVERS", "", config::AnyText(),
                   "DNS servers of the fetcher, host[:port] separated by commas; empty uses "
                   "/etc/resolv.conf (env DNS_SERVERS).");
PORTCULLIS_SETTING(
    absl::Duration, fetch_timeout, "FETCH_TIMEOUT", "5s", Positive(),
    "Longest fetch, every hop and lookup included; SafeFetch callers get at most this "
    "(env FETCH_TIMEOUT).");
PORTCULLIS_SETTING(int64_t, fetch_max_body_bytes, "FETCH_MAX_BODY_BYTES", "1048576",
                   Count<int64_t>(int64_t{1} << 30),
                   "Largest decoded body fetched; SafeFetch callers get at most this "
                   "(env FETCH_MAX_BODY_BYTES).");
PORTCULLIS_SETTING(int, fetch_max_redirects, "FETCH_MAX_REDIRECTS", "3",
                   config::WholeNumber<int>(0, 20, "a whole number from 0 to 20"),
                   "Redirects followed at most; SafeFetch callers get at most this "
                   "(env FETCH_MAX_REDIRECTS).");
PORTCULLIS_SETTING(config::PortList, fetch_allowed_ports, "FETCH_ALLOWED_PORTS", "",
                   config::Ports("a list of ports from 1 to 65535"),
                   "Ports the fetcher may connect to besides 80 and 443, separated by commas "
                   "(env FETCH_ALLOWED_PORTS).");
PORTCULLIS_SETTING(config::CidrList, egress_deny_cidrs, "EGRESS_DENY_CIDRS", "", config::Cidrs(),
                   "Address blocks refused besides the built-in ones, e.g. 168.63.129.16/32 "
                   "(env EGRESS_DENY_CIDRS).");
PORTCULLIS_SETTING(
    config::CidrList, egress_allow_cidrs, "EGRESS_ALLOW_CIDRS", "", config::Cidrs(),
    "Address blocks allowed despite the built-in ones: tests and demos ONLY, logged loudly "
    "at startup; empty in production (env EGRESS_ALLOW_CIDRS).");
PORTCULLIS_SETTING(int, fetch_max_per_host, "FETCH_MAX_PER_HOST", "2", Count<int>(10000),
                   "Fetches to one host in flight at once; more wait (env FETCH_MAX_PER_HOST).");
PORTCULLIS_SETTING(
    std::optional<config::HostPort>, admin_listen, "ADMIN_LISTEN", "", config::OptionalListen(),
    "host:port serving GET /metrics (Prometheus text); port 0 picks one; empty: no admin "
    "listener (env ADMIN_LISTEN).");
PORTCULLIS_SETTING(int, verify_now_concurrency, "VERIFY_NOW_CONCURRENCY", "4", Count<int>(1000),
                   "VerifyNow calls verifying at once; more wait, up to 64, then UNAVAILABLE "
                   "(env VERIFY_NOW_CONCURRENCY).");
PORTCULLIS_SETTING(
    int, max_verifications_in_flight, "MAX_VERIFICATIONS_IN_FLIGHT", "1000", Count<int>(100000),
    "Queue verifications in flight at once (fetching or analyzing, not yet recorded); "
    "they hold no thread while they wait for a source, so slow sources do not delay fast "
    "ones (env MAX_VERIFICATIONS_IN_FLIGHT).");
PORTCULLIS_SETTING(
    absl::Duration, author_fetch_timeout, "AUTHOR_FETCH_TIMEOUT", "2s", Positive(),
    "Longest fetch of a rel=author page (at most --fetch_timeout; env AUTHOR_FETCH_TIMEOUT).");
PORTCULLIS_SETTING(int64_t, author_fetch_max_body_bytes, "AUTHOR_FETCH_MAX_BODY_BYTES", "262144",
                   Count<int64_t>(int64_t{1} << 30),
                   "Largest rel=author page read (at most --fetch_max_body_bytes; "
                   "env AUTHOR_FETCH_MAX_BODY_BYTES).");
PORTCULLIS_SETTING(size_t, author_cache_size, "AUTHOR_CACHE_SIZE", "1024",
                   config::WholeNumber<size_t>(0, 1000000, "a whole number from 0 to 1000000"),
                   "rel=author pages remembered; 0 fetches every time (env AUTHOR_CACHE_SIZE).");
PORTCULLIS_SETTING(absl::Duration, author_cache_ttl, "AUTHOR_CACHE_TTL", "10m", ZeroOrMore(),
                   "How long a rel=author page's author is remembered (env AUTHOR_CACHE_TTL).");
PORTCULLIS_SETTING(int, fetch_max_in_flight, "FETCH_MAX_IN_FLIGHT", "1000", Count<int>(1000000),
                   "Fetches in flight at once; more wait (env FETCH_MAX_IN_FLIGHT).");
PORTCULLIS_SETTING(
    bool, ingest_require_registration, "INGEST_REQUIRE_REGISTRATION", "true", config::TrueOrFalse(),
    "true: deliveries from an unknown or disabled publisher are refused (403); false: they "
    "are evaluated as an unverified publisher without keys "
    "(env INGEST_REQUIRE_REGISTRATION).");
PORTCULLIS_SETTING(
    absl::Duration, ingest_signature_tolerance, "INGEST_SIGNATURE_TOLERANCE", "300s",
    Positive().Check([](absl::Duration d) { return d >= absl::Seconds(1) && d <= absl::Hours(24); },
                     "from 1s to 24h"),
    "Accepted distance between a provenance signature's timestamp and now, both ways "
    "(env INGEST_SIGNATURE_TOLERANCE).");
PORTCULLIS_SETTING(
    absl::Duration, ingest_default_retention, "INGEST_DEFAULT_RETENTION", "72h", Positive(),
    "How long ingest decisions are kept for de-duplication when the publisher sets no "
    "retention (env INGEST_DEFAULT_RETENTION).");
PORTCULLIS_SETTING(absl::Duration, ingest_publisher_cache_ttl, "INGEST_PUBLISHER_CACHE_TTL", "5s",
                   ZeroOrMore(),
                   "How long a publisher and its keys are cached; 0s disables the cache "
                   "(env INGEST_PUBLISHER_CACHE_TTL).");
PORTCULLIS_SETTING(
    absl::Duration, failed_mention_retention, "FAILED_MENTION_RETENTION", "720h", ZeroOrMore(),
    "FAILED mentions are deleted this long after they failed (a re-send after that is a new "
    "mention); VERIFIED ones are kept; 0s keeps them forever (env FAILED_MENTION_RETENTION).");
PORTCULLIS_SETTING(
    absl::Duration, accepted_item_retention, "ACCEPTED_ITEM_RETENTION", "168h", ZeroOrMore(),
    "Accepted ingest items (the outbox consumers page through) are deleted this long after "
    "acceptance; 0s keeps them forever (env ACCEPTED_ITEM_RETENTION).");
PORTCULLIS_SETTING(
    absl::Duration, dead_letter_retention, "DEAD_LETTER_RETENTION", "720h", ZeroOrMore(),
    "Quarantined deliveries nobody replayed or discarded are deleted this long after "
    "quarantine; 0s keeps them forever (env DEAD_LETTER_RETENTION).");
PORTCULLIS_SETTING(
    absl::Duration, drop_retention, "DROP_RETENTION", "168h", ZeroOrMore(),
    "Dropped deliveries kept in the drop ledger (publishers with keep_drops) are deleted this "
    "long after they were received, or earlier at received + the publisher's keep_drops; 0s: "
    "only the publisher's keep_drops applies (env DROP_RETENTION).");
PORTCULLIS_SETTING(
    absl::Duration, delivery_retention, "DELIVERY_RETENTION", "720h", ZeroOrMore(),
    "Outbound deliveries that ended (delivered, or failed after their last attempt) are deleted "
    "this long after their event; pending ones are kept; 0s keeps them forever (env "
    "DELIVERY_RETENTION).");
PORTCULLIS_SETTING(
    int64_t, drop_ledger_max_bytes, "DROP_LEDGER_MAX_BYTES", "67108864",
    Count<int64_t>(int64_t{1} << 40),
    "Bytes (bodies and headers) one publisher's drop ledger holds at most; a drop that does not "
    "fit is not kept, the older ones stay (env DROP_LEDGER_MAX_BYTES).");
PORTCULLIS_SETTING(
    absl::Duration, retention_sweep_interval, "RETENTION_SWEEP_INTERVAL", "1m", Positive(),
    "How often expired rows (the retentions above, expired ingest decisions) are deleted, by "
    "one verifier at a time (env RETENTION_SWEEP_INTERVAL).");
PORTCULLIS_SETTING(
    int, retention_sweep_batch, "RETENTION_SWEEP_BATCH", "500", Count<int>(100000),
    "Expired rows deleted per statement (one short transaction) at most "
    "(env RETENTION_SWEEP_BATCH).");
PORTCULLIS_SETTING(
    std::string, tokens_file, "TOKENS_FILE", "", config::AnyText(),
    "File of static API tokens, one a line: <sha256 hex of the token> <name> <scopes> "
    "[<site>,...]; merged with the tokens in the database; empty: the database only "
    "(env TOKENS_FILE).");
PORTCULLIS_SETTING(
    absl::Duration, token_refresh_interval, "TOKEN_REFRESH_INTERVAL", "10s", Positive(),
    "How often the API tokens are read again from the database: a token created or "
    "revoked on another verifier takes effect here within it (env TOKEN_REFRESH_INTERVAL).");

PORTCULLIS_SETTING(
    int, delivery_workers, "DELIVERY_WORKERS", "2",
    config::WholeNumber<int>(0, 64, "a whole number from 0 to 64"),
    "Threads sending outbound deliveries (subscriptions' events); an attempt holds no thread "
    "while its receiver answers; 0: this verifier sends none (events are still queued) "
    "(env DELIVERY_WORKERS).");
PORTCULLIS_SETTING(
    absl::Duration, delivery_timeout, "DELIVERY_TIMEOUT", "10s",
    Positive().Check([](absl::Duration d) { return d >= absl::Milliseconds(100) &&
                                                   d <= absl::Minutes(1); },
                     "from 100ms to 1m"),
    "Deadline of one outbound delivery attempt, connect to last byte; a slower receiver's "
    "attempt is retried later (env DELIVERY_TIMEOUT).");
PORTCULLIS_SETTING(
    int, delivery_max_per_destination, "DELIVERY_MAX_PER_DESTINATION", "4", Count<int>(1000),
    "Outbound delivery attempts in flight to one destination host at once; more wait "
    "(env DELIVERY_MAX_PER_DESTINATION).");
PORTCULLIS_SETTING(
    absl::Duration, delivery_lease, "DELIVERY_LEASE", "60s",
    Positive().Check([](absl::Duration d) { return d >= absl::Seconds(1); }, "at least 1s"),
    "Lease of a claimed outbound delivery, longer than --delivery_timeout: a killed "
    "verifier's deliveries are sent again (same webhook-id) after it (env DELIVERY_LEASE).");

PORTCULLIS_SETTING(
    std::string, approval_rule_relay_hosts, "APPROVAL_RULE_RELAY_HOSTS",
    "brid.gy,bsky.app,facebook.com,instagram.com,medium.com,reddit.com,twitter.com,x.com",
    config::AnyText().Check(
        [](const std::string& text) {
          for (absl::string_view host : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
            if (!portcullis::verifier::intake::ParseSiteDomain(absl::StripAsciiWhitespace(host))
                     .ok()) {
              return false;
            }
          }
          return true;
        },
        "host names separated by commas"),
    "Hosts that relay many people's posts (bridges, silos): an approval rule may not name one "
    "of them, or a subdomain, without a path (env APPROVAL_RULE_RELAY_HOSTS).");

PORTCULLIS_SETTING(
    std::string, c2pa_trust_anchors, "C2PA_TRUST_ANCHORS", "", config::AnyText(),
    "PEM file of the certificates a C2PA signer of ingested media must chain to (roots or "
    "intermediates), read once at startup; a publisher may add its own (c2pa_trust); empty: "
    "only publishers' own anchors (env C2PA_TRUST_ANCHORS).");

namespace portcullis::verifier {
namespace {

// --c2pa_trust_anchors: the anchors, read and parsed once. INVALID_ARGUMENT naming the flag.
absl::StatusOr<std::shared_ptr<const c2pa::TrustAnchors>> ReadC2paTrustAnchors(
    const std::string& path) {
  if (path.empty()) {
    return nullptr;
  }
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file || file.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat(portcullis_setting_c2pa_trust_anchors.Name(), ": cannot read ", path));
  }
  absl::StatusOr<c2pa::TrustAnchors> anchors = c2pa::TrustAnchors::FromPem(text.str());
  if (!anchors.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(portcullis_setting_c2pa_trust_anchors.Name(),
                                                   ": ", path, ": ", anchors.status().message()));
  }
  return std::make_shared<const c2pa::TrustAnchors>(*std::move(anchors));
}

}  // namespace

absl::StatusOr<VerifierConfig> BuildVerifierConfig(const config::Texts& command_line,
                                                   const config::EnvLookup& env) {
  RETURN_IF_ERROR(config::SetAll(command_line, env));
  VerifierConfig config;
  config.database_url = absl::GetFlag(FLAGS_database_url);
  if (config.database_url.empty()) {
    return absl::InvalidArgumentError(
        "--database_url (DATABASE_URL) is required: a libpq connection string or URI");
  }
  config.grpc_listen = absl::GetFlag(FLAGS_grpc_listen);
  config.tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  config.tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  config.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  config.tls.reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  RETURN_IF_ERROR(grpc_tls::CheckServerTlsOptions(config.tls));
  config.health_listen = absl::GetFlag(FLAGS_health_listen);
  config.db_pool_size = absl::GetFlag(FLAGS_db_pool_size);
  config.db_acquire_timeout = absl::GetFlag(FLAGS_db_acquire_timeout);
  config.db_statement_timeout = absl::GetFlag(FLAGS_db_statement_timeout);
  config.max_queued_work = absl::GetFlag(FLAGS_max_queued_work);
  config.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  config.health_interval = absl::GetFlag(FLAGS_health_interval);
  config.shutdown_delay = absl::GetFlag(FLAGS_shutdown_delay);
  config.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  config.startup_timeout = absl::GetFlag(FLAGS_startup_timeout);
  config.log_level = absl::GetFlag(FLAGS_log_level);
  config.migrate_only = absl::GetFlag(FLAGS_migrate_only);
  config.failed_retention = absl::GetFlag(FLAGS_failed_retention);
  config.max_pending_per_source_host = absl::GetFlag(FLAGS_max_pending_per_source_host);
  config.max_queue_length = absl::GetFlag(FLAGS_max_queue_length);
  config.submit_writers = absl::GetFlag(FLAGS_submit_writers);
  config.workers = absl::GetFlag(FLAGS_workers);
  config.worker_lease = absl::GetFlag(FLAGS_worker_lease);
  config.worker_poll_interval = absl::GetFlag(FLAGS_worker_poll_interval);
  config.retry_base = absl::GetFlag(FLAGS_retry_base);
  config.retry_cap = absl::GetFlag(FLAGS_retry_cap);
  if (config.retry_cap < config.retry_base) {
    return portcullis_setting_retry_cap.Refuse("at least --retry_base");
  }
  config.retry_max_attempts = absl::GetFlag(FLAGS_retry_max_attempts);
  config.dns_servers = absl::GetFlag(FLAGS_dns_servers);
  config.fetcher.total_timeout = absl::GetFlag(FLAGS_fetch_timeout);
  config.fetcher.max_body_bytes = absl::GetFlag(FLAGS_fetch_max_body_bytes);
  config.fetcher.max_redirects = absl::GetFlag(FLAGS_fetch_max_redirects);
  config.fetcher.max_per_host = absl::GetFlag(FLAGS_fetch_max_per_host);
  config.fetcher.max_in_flight = absl::GetFlag(FLAGS_fetch_max_in_flight);
  config.egress.extra_allowed_ports = absl::GetFlag(FLAGS_fetch_allowed_ports).ports;
  config.egress.extra_deny = absl::GetFlag(FLAGS_egress_deny_cidrs).cidrs;
  config.egress.allow = absl::GetFlag(FLAGS_egress_allow_cidrs).cidrs;
  config.admin_listen = absl::GetFlag(FLAGS_admin_listen);
  config.ingest_require_registration = absl::GetFlag(FLAGS_ingest_require_registration);
  config.ingest_signature_tolerance = absl::GetFlag(FLAGS_ingest_signature_tolerance);
  config.ingest_default_retention = absl::GetFlag(FLAGS_ingest_default_retention);
  config.ingest_publisher_cache_ttl = absl::GetFlag(FLAGS_ingest_publisher_cache_ttl);
  config.failed_mention_retention = absl::GetFlag(FLAGS_failed_mention_retention);
  config.accepted_item_retention = absl::GetFlag(FLAGS_accepted_item_retention);
  config.dead_letter_retention = absl::GetFlag(FLAGS_dead_letter_retention);
  config.drop_retention = absl::GetFlag(FLAGS_drop_retention);
  config.delivery_retention = absl::GetFlag(FLAGS_delivery_retention);
  config.drop_ledger_max_bytes = absl::GetFlag(FLAGS_drop_ledger_max_bytes);
  config.retention_sweep_interval = absl::GetFlag(FLAGS_retention_sweep_interval);
  config.retention_sweep_batch = absl::GetFlag(FLAGS_retention_sweep_batch);
  config.tokens_file = absl::GetFlag(FLAGS_tokens_file);
  config.token_refresh_interval = absl::GetFlag(FLAGS_token_refresh_interval);
  config.c2pa_trust_anchors_file = absl::GetFlag(FLAGS_c2pa_trust_anchors);
  ASSIGN_OR_RETURN(config.c2pa_trust_anchors, ReadC2paTrustAnchors(config.c2pa_trust_anchors_file));
  config.verify_now_concurrency = absl::GetFlag(FLAGS_verify_now_concurrency);
  config.delivery_workers = absl::GetFlag(FLAGS_delivery_workers);
  config.delivery_timeout = absl::GetFlag(FLAGS_delivery_timeout);
  config.delivery_max_per_destination = absl::GetFlag(FLAGS_delivery_max_per_destination);
  config.delivery_lease = absl::GetFlag(FLAGS_delivery_lease);
  if (config.delivery_lease <= config.delivery_timeout) {
    return portcullis_setting_delivery_lease.Refuse("longer than --delivery_timeout");
  }
  config.max_verifications_in_flight = absl::GetFlag(FLAGS_max_verifications_in_flight);
  // The source is fetched within the fetcher's maximums; the rel=author page within its own
  // limits, with at most one redirect (and never more than the fetcher allows).
  config.verification.source_limits = {config.fetcher.max_redirects, config.fetcher.total_timeout,
                                       config.fetcher.max_body_bytes};
  config.verification.author_limits.total_timeout = absl::GetFlag(FLAGS_author_fetch_timeout);
  config.verification.author_limits.max_body_bytes =
      absl::GetFlag(FLAGS_author_fetch_max_body_bytes);
  config.verification.author_limits.max_redirects = std::min(1, config.fetcher.max_redirects);
  config.verification.author_cache_entries = absl::GetFlag(FLAGS_author_cache_size);
  config.verification.author_cache_ttl = absl::GetFlag(FLAGS_author_cache_ttl);
  for (absl::string_view host : absl::StrSplit(absl::GetFlag(FLAGS_approval_rule_relay_hosts),
                                               ',', absl::SkipWhitespace())) {
    absl::StatusOr<std::string> domain =
        intake::ParseSiteDomain(absl::StripAsciiWhitespace(host));
    if (domain.ok()) {
      config.approval_rule_relay_hosts.push_back(*std::move(domain));
    }
  }
  return config;
}

}  // namespace portcullis::verifier
