#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/config/listen_address.h"
#include "common/grpc/channel_credentials.h"
#include "verifier-service/src/c2pa/trust_anchors.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/verification/source_verifier.h"

namespace portcullis::verifier {

// Every limit and timeout of the verifier, validated once at startup and never changed. Built
// from the flags by BuildVerifierConfig (verifier_flags.h); tests may also fill it by hand.
struct VerifierConfig {
  // libpq connection string or URI of the PostgreSQL database.
  std::string database_url;
  // Hosts that relay many people's posts: an approval rule may not name one of them (or a
  // subdomain) without a path (issue 16). Serialized host names.
  std::vector<std::string> approval_rule_relay_hosts;
  // Where the gRPC server listens; port 0 picks a free port.
  config::HostPort grpc_listen;
  // TLS of the gRPC port: none (plaintext), server TLS (cert and key), or mutual TLS (and a client
  // CA: every client must present a certificate it issued). The files are read again every
  // reload interval, so renewed certificates are served without a restart. The admin port stays
  // plain HTTP.
  grpc_tls::ServerTlsOptions tls;
  // A second, plaintext gRPC port answering grpc.health.v1 only (the same status as the main
  // port), for probes that cannot speak TLS (the kubelet's grpc probe); port 0 picks a free port.
  // Unset: none.
  std::optional<config::HostPort> health_listen;
  // Database connections at most, and threads running database work.
  int db_pool_size = 8;
  // How long a request waits for a free database connection before UNAVAILABLE.
  absl::Duration db_acquire_timeout = absl::Seconds(2);
  // PostgreSQL statement_timeout on every connection.
  absl::Duration db_statement_timeout = absl::Seconds(5);
  // Requests waiting for a database thread at most; beyond that, UNAVAILABLE at once.
  size_t max_queued_work = 1024;
  // Threads writing submissions in batches (store/mention_writer.h), one connection each.
  int submit_writers = 2;
  // gRPC connections are closed (GOAWAY) after this long so clients rebalance onto new pods.
  absl::Duration max_connection_age = absl::Minutes(5);
  // How often the health checker pings the database.
  absl::Duration health_interval = absl::Seconds(1);
  // On SIGTERM: how long to report NOT_SERVING before stopping to accept calls.
  absl::Duration shutdown_delay = absl::ZeroDuration();
  // On SIGTERM: how long in-flight calls get to finish.
  absl::Duration drain_timeout = absl::Seconds(10);
  // --migrate_only: how long to keep trying to reach the database.
  absl::Duration startup_timeout = absl::Seconds(60);
  // trace, debug, info, warn, error or off.
  std::string log_level = "info";
  // Apply migrations and exit.
  bool migrate_only = false;
  // A FAILED mention submitted again is left alone for this long after it failed; after that it
  // starts over as PENDING.
  absl::Duration failed_retention = absl::Hours(24);
  // Admission limits of a new mention (0: none): PENDING mentions per source host (beyond:
  // RESOURCE_EXHAUSTED, the gateway's 429 + Retry-After) and verification jobs queued (beyond:
  // UNAVAILABLE, 503 + Retry-After). See store::SubmitLimits.
  int64_t max_pending_per_source_host = 1000;
  int64_t max_queue_length = 100000;
  // Verification worker threads; 0 disables the workers (mentions are queued, not verified).
  int workers = 8;
  // Lease of a claimed job; a dead worker's jobs are taken over this long after its last renewal.
  absl::Duration worker_lease = absl::Seconds(30);
  // Longest idle wait of a worker without a LISTEN/NOTIFY wake-up.
  absl::Duration worker_poll_interval = absl::Seconds(30);
  // Retries of transient failures: base delay (doubling), cap, and attempts at most.
  absl::Duration retry_base = absl::Seconds(30);
  absl::Duration retry_cap = absl::Hours(1);
  int retry_max_attempts = 8;
  // DNS servers of the fetcher, "host[:port]" separated by commas; empty: /etc/resolv.conf.
  std::string dns_servers;
  // Extra ports, extra refused blocks, and the allow list (tests and demos only: loud warning).
  fetch::EgressPolicyConfig egress;
  // The fetcher's maximums (a SafeFetch caller gets at most these) and in-flight limits.
  fetch::SafeFetcherConfig fetcher;
  // Where GET /metrics is served (Prometheus text); port 0 picks a free port. Unset: no admin
  // listener.
  std::optional<config::HostPort> admin_listen;
  // VerifyNow calls verifying at once (each holds a thread for a whole verification).
  int verify_now_concurrency = 4;
  // Queue verifications in flight at once (claimed, fetching or analyzing, not yet recorded): an
  // event-driven verification holds no thread while it waits for its source, so this is far
  // above `workers` (the threads that start them and record their outcomes).
  int max_verifications_in_flight = 1000;
  // The verification pipeline: the source is fetched within the fetcher's maximums; the
  // rel=author page within author_limits; author pages cached.
  verification::SourceVerifierConfig verification;
  // Feed ingest: an unknown or disabled publisher is UNKNOWN_PUBLISHER (true) or evaluated as an
  // unverified publisher without keys (false).
  bool ingest_require_registration = true;
  // Accepted distance between a signature's timestamp and now, both ways.
  absl::Duration ingest_signature_tolerance = absl::Seconds(300);
  // How long decisions are kept for idempotency when the publisher sets no retention.
  absl::Duration ingest_default_retention = absl::Hours(72);
  // How long a publisher lookup is reused (admin changes in other pods show after at most this).
  absl::Duration ingest_publisher_cache_ttl = absl::Seconds(5);
  // Retention (issue 17): how long FAILED mentions, accepted ingest items and dead letters are
  // kept (zero: forever); expired ingest decisions go as soon as they expire. One sweeper, in one
  // pod at a time, deletes them every interval, in batches (one short transaction each) of at
  // most this many rows.
  absl::Duration failed_mention_retention = absl::Hours(30 * 24);
  absl::Duration accepted_item_retention = absl::Hours(7 * 24);
  absl::Duration dead_letter_retention = absl::Hours(30 * 24);
  // The drop ledger (issue 17): rows go at received + drop_retention (zero: only the
  // publisher's keep_drops applies) or received + keep_drops, whichever is first; one
  // publisher's ledger holds at most drop_ledger_max_bytes (a drop that does not fit is not kept).
  absl::Duration drop_retention = absl::Hours(7 * 24);
  // Outbound deliveries that ended (delivered or failed) go this long after their event (zero:
  // kept forever); pending ones are kept until they end.
  absl::Duration delivery_retention = absl::Hours(30 * 24);
  int64_t drop_ledger_max_bytes = int64_t{64} << 20;
  absl::Duration retention_sweep_interval = absl::Minutes(1);
  int retention_sweep_batch = 500;
  // API tokens: a file of static tokens (auth::ParseStaticTokens format, read at startup) merged
  // with the api_tokens table; empty: the table only. The table is read again every interval,
  // so a token created or revoked on another verifier takes effect here within it.
  std::string tokens_file;
  absl::Duration token_refresh_interval = absl::Seconds(10);
  // Outbound deliveries (issue 20): threads sending the outbox (0: none in this pod; events are
  // still queued), the deadline of one attempt, attempts in flight to one destination host at
  // once, and the lease of a claimed delivery (a killed pod's are sent again after it; longer
  // than the deadline).
  int delivery_workers = 2;
  absl::Duration delivery_timeout = absl::Seconds(10);
  int delivery_max_per_destination = 4;
  absl::Duration delivery_lease = absl::Seconds(60);
  // C2PA in ingested media (issue 19): the PEM file of trust anchors every publisher's media
  // signers may chain to (empty: none), read and parsed once by BuildVerifierConfig; null when
  // the file is not set.
  std::string c2pa_trust_anchors_file;
  std::shared_ptr<const c2pa::TrustAnchors> c2pa_trust_anchors;
};

}  // namespace portcullis::verifier
