#pragma once

#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/config/listen_address.h"
#include "grpcpp/server.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "verifier-service/src/delivery/delivery_worker.h"
#include "verifier-service/src/fetch/cares_resolver.h"
#include "verifier-service/src/fetch/curl_http_client.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/fetch_metrics.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/ingest/ingest_evaluator.h"
#include "verifier-service/src/store/ingest_writer.h"
#include "verifier-service/src/lifecycle/retention_sweeper.h"
#include "verifier-service/src/queue/mention_verifier.h"
#include "verifier-service/src/queue/verification_worker.h"
#include "verifier-service/src/server/blocking_pool.h"
#include "verifier-service/src/server/verifier_metrics.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_ingest_store.h"
#include "verifier-service/src/store/pg_publisher_store.h"
#include "verifier-service/src/store/pg_retention_store.h"
#include "verifier-service/src/store/pg_job_listener.h"
#include "verifier-service/src/store/pg_job_store.h"
#include "verifier-service/src/store/mention_writer.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_blocklist_store.h"
#include "verifier-service/src/store/pg_delivery_store.h"
#include "verifier-service/src/store/pg_moderation_store.h"
#include "verifier-service/src/store/pg_public_mention_store.h"
#include "verifier-service/src/store/pg_erasure_store.h"
#include "verifier-service/src/store/pg_site_store.h"
#include "verifier-service/src/store/pg_token_store.h"
#include "verifier-service/src/auth/token_registry.h"
#include "verifier-service/src/verifier_config.h"
#include "verifier-service/src/verification/html_source_analyzer.h"
#include "verifier-service/src/verification/safe_page_fetcher.h"
#include "verifier-service/src/verification/source_verifier.h"

namespace portcullis::verifier::server {

// The gRPC health service name of the Verifier (besides "", the whole server).
inline constexpr char kVerifierServiceName[] = "portcullis.verifier.v1.Verifier";

// The running verifier: gRPC server (Verifier, grpc.health.v1, reflection), database pools,
// blocking pool, and a readiness thread. Health is NOT_SERVING until migrations are applied and
// the database answers; while the database cannot be reached the server keeps listening and keeps
// retrying with backoff. The readiness thread then pings the database every health interval and
// flips SERVING / NOT_SERVING.
class VerifierServer {
 public:
  // Starts listening and the readiness thread. Fails only when the server cannot listen, the
  // embedded migrations are broken, or the fetcher cannot be built (InvalidArgument for a bad
  // DNS server list or fetch limits: a startup misconfiguration). `on_fatal` runs (on the readiness
  // thread) when the server gives up for good — the database has a newer schema than this binary
  // knows, or a migration fails — after fatal_error() is set; main uses it to begin shutdown and
  // exit non-zero. `on_fatal` must not call Shutdown(). `verifier` (which must outlive the
  // server; null: the real SourceVerifier over the server's own fetcher) verifies queued mentions
  // on config.workers threads once the schema is ready, and VerifyNow calls. With 0 workers,
  // mentions are queued and not verified, and the log says so at startup.
  static absl::StatusOr<std::unique_ptr<VerifierServer>> Start(
      const VerifierConfig& config, absl::AnyInvocable<void()> on_fatal = nullptr,
      queue::MentionVerifier* verifier = nullptr);

  // Shutdown(), if not done yet.
  ~VerifierServer();

  VerifierServer(const VerifierServer&) = delete;
  VerifierServer& operator=(const VerifierServer&) = delete;

  // The address actually bound (the real port when configured with port 0).
  const config::HostPort& address() const { return address_; }
  // Where /metrics is served (the real port when configured with port 0); unset without
  // --admin_listen.
  const std::optional<config::HostPort>& admin_address() const { return admin_address_; }
  // Where the plaintext health-only port listens (the real port when configured with port 0);
  // unset without --health_listen.
  const std::optional<config::HostPort>& health_address() const { return health_address_; }

  // Why the server gave up (see Start); OK while it has not.
  absl::Status fatal_error() const;

  // The SIGTERM sequence: health NOT_SERVING at once, wait the shutdown delay, stop accepting
  // calls and give in-flight calls until the drain timeout, then stop the readiness thread, the
  // blocking pool and the fetcher. Idempotent.
  void Shutdown();

 private:
  VerifierServer(const VerifierConfig& config, absl::AnyInvocable<void()> on_fatal);

  // The steps of Start, in order; each builds its members or fails with one line.
  // The migrator, the connection pools, the stores and the blocking pool.
  absl::Status OpenDatabase();
  // --tokens_file and the token registry.
  absl::Status BuildTokens();
  // The ingest stores, the evaluator, its batching writer and the retention sweeper.
  absl::Status BuildIngest();
  // Builds the egress policy, resolver, HTTP client and fetcher from the config.
  absl::Status StartFetcher();
  // What the workers and VerifyNow run: `verifier`, or (null) the real pipeline over fetcher_;
  // counted in flight; the queue depth sampler; VerifyNow's pool.
  void BuildVerifier(queue::MentionVerifier* verifier);
  // The real verification pipeline over fetcher_ (when Start was given no verifier).
  void BuildSourceVerifier();
  // GET /metrics on config_.admin_listen, when set.
  absl::Status StartAdmin();
  // VerifierService::Create over everything above.
  absl::Status BuildService();
  // The gRPC server on config_.grpc_listen; then the plaintext health port, when set.
  absl::Status StartGrpc(std::shared_ptr<grpc::ServerCredentials> credentials);
  absl::Status StartHealthPort();
  // After the gRPC server drained: stops the resolver and HTTP client loops, then the fetcher.
  void StopFetcher();
  void ReadinessLoop();
  // Once the schema is ready: the verification workers, or a loud line that there are none.
  void StartWorkers();
  // Once the schema is ready, with an admin listener: samples the queue depth for /metrics.
  void StartQueueDepthSampler();
  // Waits up to `timeout`; true when Shutdown() began meanwhile.
  bool WaitForStop(absl::Duration timeout);
  void SetServing(bool serving);

  const VerifierConfig config_;
  config::HostPort address_;
  std::unique_ptr<store::PgConnectionPool> db_pool_;
  std::unique_ptr<store::PgConnectionPool> health_db_pool_;
  std::unique_ptr<store::PgConnectionPool> job_db_pool_;
  std::unique_ptr<store::PgMentionStore> store_;
  // SubmitMention's batches; stopped after the gRPC server drained (declared after store_).
  std::unique_ptr<store::MentionWriter> mention_writer_;
  std::unique_ptr<store::PgMentionStore> health_store_;
  std::unique_ptr<store::PgSiteStore> site_store_;
  std::unique_ptr<store::PgBlocklistStore> blocklist_store_;
  std::unique_ptr<store::PgModerationStore> moderation_store_;
  std::unique_ptr<store::PgPublicMentionStore> public_mentions_;
  std::unique_ptr<store::PgErasureStore> erasure_store_;
  // API tokens: the table, and the registry every call is authenticated against (the table's
  // snapshot merged with --tokens_file), loaded before SERVING and refreshed in the background.
  std::unique_ptr<store::PgTokenStore> token_store_;
  std::unique_ptr<auth::TokenRegistry> token_registry_;
  // Feed ingest: the stores and the evaluator (with its publisher cache).
  std::unique_ptr<store::PgPublisherStore> publisher_store_;
  std::unique_ptr<store::PgIngestStore> ingest_store_;
  std::unique_ptr<ingest::IngestEvaluator> ingest_evaluator_;
  // EvaluateIngest's batches (issue 21); stopped after the blocking pool (declared before it, so
  // also destroyed after it).
  std::unique_ptr<store::IngestWriter> ingest_writer_;
  // The one sweeper of expired rows (issue 17), started once the schema is ready.
  std::unique_ptr<store::PgRetentionStore> retention_store_;
  std::unique_ptr<lifecycle::RetentionSweeper> retention_sweeper_;
  std::unique_ptr<store::PgJobStore> job_store_;        // the workers', on job_db_pool_
  std::unique_ptr<store::PgJobStore> verify_now_jobs_;  // VerifyNow's, on db_pool_
  std::unique_ptr<store::PgJobListener> job_listener_;
  std::unique_ptr<queue::VerificationWorker> worker_;
  std::unique_ptr<store::Migrator> migrator_;
  std::unique_ptr<BlockingPool> blocking_pool_;
  // Every metric of the process, served on the admin listener (when configured).
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::unique_ptr<fetch::FetchMetrics> fetch_metrics_;
  // The scaling metrics (verifier_metrics.h): in flight counted around the verifier the workers
  // get, the queue depth sampled from the job table.
  std::unique_ptr<InFlightVerifier> in_flight_verifier_;
  std::unique_ptr<QueueDepthSampler> queue_depth_sampler_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::optional<config::HostPort> admin_address_;
  // The fetcher behind CheckUrl and SafeFetch, built once; stopped after the gRPC server drained.
  std::unique_ptr<fetch::EgressPolicy> egress_policy_;
  std::unique_ptr<fetch::CaresResolver> resolver_;
  std::unique_ptr<fetch::CurlHttpClient> http_client_;
  std::unique_ptr<fetch::SafeFetcher> fetcher_;
  // Outbound deliveries (issue 20): their store, their own fetcher over the same policy, resolver
  // and HTTP client (its per-host cap is --delivery_max_per_destination, its deadline
  // --delivery_timeout, no redirects), and the worker, started once the schema is ready and
  // stopped before the fetchers.
  std::unique_ptr<store::PgDeliveryStore> delivery_store_;
  std::unique_ptr<fetch::SafeFetcher> delivery_fetcher_;
  std::unique_ptr<delivery::DeliveryWorker> delivery_worker_;
  // The real verification pipeline, when Start was given no verifier; after the fetcher.
  std::unique_ptr<verification::SafePageFetcher> page_fetcher_;
  std::unique_ptr<verification::HtmlSourceAnalyzer> source_analyzer_;
  std::unique_ptr<verification::SourceVerifier> source_verifier_;
  // VerifyNow's threads: each may block for a whole verification.
  std::unique_ptr<BlockingPool> verify_now_pool_;
  // The verifications' CPU work (SourceVerifier::set_cpu_executor), one thread per core.
  std::unique_ptr<BlockingPool> analysis_pool_;
  std::unique_ptr<VerifierService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  // --health_listen: grpc.health.v1 only, plaintext, mirroring grpc_server_'s health.
  std::unique_ptr<grpc::Server> health_server_;
  std::optional<config::HostPort> health_address_;
  absl::AnyInvocable<void()> on_fatal_;
  // Started last: joinable means Start succeeded.
  std::thread readiness_thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status fatal_error_ ABSL_GUARDED_BY(mu_);
};

// --migrate_only: applies the embedded migrations, retrying with backoff while the database
// cannot be reached, for at most `timeout`. UNAVAILABLE when it stayed unreachable; other errors
// as Migrator::Apply.
absl::Status MigrateWithRetry(const std::string& database_url, absl::Duration timeout);

}  // namespace portcullis::verifier::server
