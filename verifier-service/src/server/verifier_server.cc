#include "verifier-service/src/server/verifier_server.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "verifier-service/src/intake/site_request_validation.h"
#include "verifier-service/src/server/rpc_metrics.h"
#include "verifier-service/src/store/pg_queue_depth.h"

namespace portcullis::verifier::server {
namespace {

constexpr absl::Duration kFirstRetryDelay = absl::Milliseconds(100);
constexpr absl::Duration kMaxRetryDelay = absl::Seconds(5);

// VerifyNow calls waiting for one of its threads at most; beyond, UNAVAILABLE.
constexpr size_t kVerifyNowQueue = 64;

// --tokens_file: the static tokens, read once at startup. INVALID_ARGUMENT naming the flag.
absl::StatusOr<std::vector<auth::ActiveToken>> ReadStaticTokens(const std::string& path) {
  if (path.empty()) {
    return std::vector<auth::ActiveToken>();
  }
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  if (!file || file.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tokens_file (TOKENS_FILE): cannot read ", path));
  }
  absl::StatusOr<std::vector<auth::ActiveToken>> tokens = auth::ParseStaticTokens(text.str());
  if (!tokens.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tokens_file (TOKENS_FILE): ", tokens.status().message()));
  }
  // Sites as the stores hold them (AddSite's normalization), so that "Blog.Example" binds the
  // site blog.example instead of silently binding nothing.
  for (auth::ActiveToken& token : *tokens) {
    for (std::string& site : token.caller.sites) {
      portcullis::verifier::v1::AddSiteRequest as_site;
      as_site.set_domain(site);
      absl::StatusOr<std::string> domain = intake::Validate(as_site);
      if (!domain.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--tokens_file (TOKENS_FILE): token ",
                                                       token.caller.name, ": site '", site,
                                                       "': ", domain.status().message()));
      }
      site = *std::move(domain);
    }
  }
  return tokens;
}

bool IsRetryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

int ClampToIntMillis(absl::Duration duration) {
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(duration), INT_MAX));
}

}  // namespace

VerifierServer::VerifierServer(const VerifierConfig& config, absl::AnyInvocable<void()> on_fatal)
    : config_(config), on_fatal_(std::move(on_fatal)) {}

absl::StatusOr<std::unique_ptr<VerifierServer>> VerifierServer::Start(
    const VerifierConfig& config, absl::AnyInvocable<void()> on_fatal,
    queue::MentionVerifier* verifier) {
  // The gRPC port's credentials first: a missing or wrong certificate file is a startup
  // misconfiguration (InvalidArgument naming the flag), found before anything else starts.
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   grpc_tls::MakeServerCredentials(config.tls));
  // Each step builds members; on a failure the members built so far are destroyed in reverse
  // order of declaration (the pools stop, the fetcher's loops stop) with nothing started yet.
  std::unique_ptr<VerifierServer> server(new VerifierServer(config, std::move(on_fatal)));
  RETURN_IF_ERROR(server->OpenDatabase());
  RETURN_IF_ERROR(server->BuildTokens());
  RETURN_IF_ERROR(server->BuildIngest());
  RETURN_IF_ERROR(server->StartFetcher());
  server->BuildVerifier(verifier);
  RETURN_IF_ERROR(server->StartAdmin());
  RETURN_IF_ERROR(server->BuildService());
  RETURN_IF_ERROR(server->StartGrpc(std::move(credentials)));
  RETURN_IF_ERROR(server->StartHealthPort());
  server->SetServing(false);
  server->readiness_thread_ = std::thread([raw = server.get()] { raw->ReadinessLoop(); });
  return server;
}

absl::Status VerifierServer::OpenDatabase() {
  ASSIGN_OR_RETURN(std::vector<store::Migration> migrations, store::BuiltinMigrations());
  migrator_ = std::make_unique<store::Migrator>(std::move(migrations));
  ASSIGN_OR_RETURN(db_pool_, store::PgConnectionPool::Create(
                                 {config_.database_url, config_.db_pool_size,
                                  config_.db_acquire_timeout, config_.db_statement_timeout}));
  // The health checker has its own connection, so a busy pool does not read as a dead database.
  ASSIGN_OR_RETURN(health_db_pool_,
                   store::PgConnectionPool::Create({config_.database_url, 1,
                                                    config_.db_acquire_timeout,
                                                    config_.db_statement_timeout}));
  store_ = std::make_unique<store::PgMentionStore>(*db_pool_, config_.failed_retention);
  store_->SetLimits({config_.max_pending_per_source_host, config_.max_queue_length});
  store::MentionWriterOptions writer_options;
  writer_options.writers = config_.submit_writers;
  writer_options.max_queued = static_cast<int>(config_.max_queued_work);
  writer_options.connection = {config_.database_url, 1, config_.db_acquire_timeout,
                               config_.db_statement_timeout};
  ASSIGN_OR_RETURN(mention_writer_, store::MentionWriter::Start(*store_, writer_options));
  // The workers' job statements all go by key (job ids, the lease owner, the run_at index): their
  // own connections plan each once (keyed_statements_only) instead of once per execution, which
  // PostgreSQL did for the array parameters of a batch (a custom plan per batch: 6% of the
  // machine's CPU under bench/verify). One connection each for the dispatcher, the renewer and
  // the recorders; VerifyNow's jobs go through the shared pool.
  ASSIGN_OR_RETURN(job_db_pool_,
                   store::PgConnectionPool::Create(
                       {config_.database_url, 2 + queue::WorkerOptions().recorders,
                        config_.db_acquire_timeout, config_.db_statement_timeout,
                        /*keyed_statements_only=*/true}));
  job_store_ = std::make_unique<store::PgJobStore>(*job_db_pool_);
  verify_now_jobs_ = std::make_unique<store::PgJobStore>(*db_pool_);
  health_store_ = std::make_unique<store::PgMentionStore>(*health_db_pool_);
  // One thread per database connection: more threads would only wait for connections.
  blocking_pool_ = std::make_unique<BlockingPool>(config_.db_pool_size, config_.max_queued_work);
  site_store_ = std::make_unique<store::PgSiteStore>(*db_pool_);
  blocklist_store_ = std::make_unique<store::PgBlocklistStore>(*db_pool_);
  moderation_store_ = std::make_unique<store::PgModerationStore>(*db_pool_);
  public_mentions_ = std::make_unique<store::PgPublicMentionStore>(*db_pool_);
  erasure_store_ = std::make_unique<store::PgErasureStore>(*db_pool_);
  delivery_store_ = std::make_unique<store::PgDeliveryStore>(*db_pool_);
  return absl::OkStatus();
}

absl::Status VerifierServer::BuildTokens() {
  ASSIGN_OR_RETURN(std::vector<auth::ActiveToken> static_tokens,
                   ReadStaticTokens(config_.tokens_file));
  if (static_tokens.empty()) {
    logging::Info("no static API tokens (--tokens_file): only tokens in the database are accepted");
  }
  token_store_ = std::make_unique<store::PgTokenStore>(*db_pool_);
  token_registry_ = std::make_unique<auth::TokenRegistry>(
      *token_store_, std::move(static_tokens), config_.token_refresh_interval);
  return absl::OkStatus();
}

absl::Status VerifierServer::BuildIngest() {
  publisher_store_ = std::make_unique<store::PgPublisherStore>(*db_pool_);
  ingest_store_ = std::make_unique<store::PgIngestStore>(*db_pool_);
  ingest::IngestEvaluatorOptions ingest_options;
  ingest_options.require_registration = config_.ingest_require_registration;
  ingest_options.default_retention = config_.ingest_default_retention;
  ingest_options.publisher_cache_ttl = config_.ingest_publisher_cache_ttl;
  ingest_options.drop_ledger_max_bytes = config_.drop_ledger_max_bytes;
  ingest_options.signature_limits.tolerance = config_.ingest_signature_tolerance;
  ingest_options.c2pa_trust_anchors = config_.c2pa_trust_anchors;
  ingest_evaluator_ = std::make_unique<ingest::IngestEvaluator>(
      *publisher_store_, *ingest_store_, std::move(ingest_options));
  // EvaluateIngest's decisions are written in batches (issue 21), by as many writers as
  // SubmitMention's (--submit_writers), each with its own connection.
  store::IngestWriterOptions writer_options;
  writer_options.writers = config_.submit_writers;
  writer_options.max_queued = static_cast<int>(config_.max_queued_work);
  writer_options.connection = {config_.database_url, 1, config_.db_acquire_timeout,
                               config_.db_statement_timeout};
  ASSIGN_OR_RETURN(ingest_writer_, store::IngestWriter::Start(*ingest_store_, writer_options));
  ingest_evaluator_->SetRecorder(ingest_writer_.get());
  retention_store_ = std::make_unique<store::PgRetentionStore>(*db_pool_);
  lifecycle::RetentionSweeperOptions sweeper_options;
  sweeper_options.periods.failed_mentions = config_.failed_mention_retention;
  sweeper_options.periods.accepted_items = config_.accepted_item_retention;
  sweeper_options.periods.dead_letters = config_.dead_letter_retention;
  sweeper_options.periods.drops = config_.drop_retention;
  sweeper_options.periods.finished_deliveries = config_.delivery_retention;
  sweeper_options.interval = config_.retention_sweep_interval;
  sweeper_options.batch = config_.retention_sweep_batch;
  retention_sweeper_ = std::make_unique<lifecycle::RetentionSweeper>(
      *retention_store_, std::move(sweeper_options), *registry_);
  return absl::OkStatus();
}

void VerifierServer::BuildVerifier(queue::MentionVerifier* verifier) {
  if (verifier == nullptr) {
    // The real pipeline, over the fetcher just built: what the workers and VerifyNow run.
    BuildSourceVerifier();
    verifier = source_verifier_.get();
  }
  in_flight_verifier_ = std::make_unique<InFlightVerifier>(verifier, *registry_);
  if (config_.admin_listen.has_value()) {
    // Only when /metrics is served: otherwise nobody would read the samples.
    queue_depth_sampler_ = std::make_unique<QueueDepthSampler>(
        [pool = db_pool_.get()] { return store::CountDueJobs(*pool, kQueueDepthCap); },
        kQueueDepthInterval, *registry_);
  }
  verify_now_pool_ = std::make_unique<BlockingPool>(config_.verify_now_concurrency, kVerifyNowQueue);
}

absl::Status VerifierServer::BuildService() {
  VerifierServiceDeps deps;
  deps.tokens = token_registry_.get();
  deps.pool = blocking_pool_.get();
  deps.mentions = store_.get();
  deps.public_mentions = public_mentions_.get();
  deps.submissions = mention_writer_.get();
  deps.sites = site_store_.get();
  deps.blocks = blocklist_store_.get();
  deps.moderation = moderation_store_.get();
  deps.approval_rule_relay_hosts = config_.approval_rule_relay_hosts;
  deps.erasures = erasure_store_.get();
  deps.deliveries = delivery_store_.get();
  deps.token_store = token_store_.get();
  deps.policy = egress_policy_.get();
  deps.resolver = resolver_.get();
  deps.fetcher = fetcher_.get();
  deps.evaluator = ingest_evaluator_.get();
  deps.publishers = publisher_store_.get();
  deps.ingest = ingest_store_.get();
  deps.verify_now = {verify_now_jobs_.get(),
                     in_flight_verifier_.get(),
                     verify_now_pool_.get(),
                     queue::MakeWorkerOwner() + "/verify-now",
                     config_.worker_lease,
                     queue::RetryPolicy{config_.retry_base, config_.retry_cap,
                                        config_.retry_max_attempts},
                     config_.fetcher.total_timeout +
                         config_.verification.author_limits.total_timeout};
  ASSIGN_OR_RETURN(service_, VerifierService::Create(deps));
  return absl::OkStatus();
}

absl::Status VerifierServer::StartGrpc(std::shared_ptr<grpc::ServerCredentials> credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(config_.grpc_listen.ToString(), std::move(credentials), &bound_port);
  builder.RegisterService(service_.get());
  // portcullis_verifier_grpc_requests_total{method, code} (rpc_metrics.h).
  builder.experimental().SetInterceptorCreators(MakeRpcMetricsInterceptors(*registry_));
  // A port already in use is a startup error, not a silently shared port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Close connections after a while so clients of a headless Service reconnect and spread over
  // new pods; in-flight calls get the drain timeout to finish.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                             ClampToIntMillis(config_.max_connection_age));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             ClampToIntMillis(config_.drain_timeout));
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr || bound_port == 0) {
    grpc_server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config_.grpc_listen.ToString()));
  }
  address_ = config_.grpc_listen;
  address_.port = static_cast<uint16_t>(bound_port);
  logging::Info("listening grpc={} tls={}", address_.ToString(),
                !config_.tls.enabled()                 ? "off"
                : config_.tls.client_ca_file.empty() ? "server"
                                                       : "mutual");
  return absl::OkStatus();
}

absl::Status VerifierServer::StartHealthPort() {
  if (!config_.health_listen.has_value()) {
    return absl::OkStatus();
  }
  // No service registered: the default health service is all it serves.
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config_.health_listen->ToString(), grpc::InsecureServerCredentials(),
                           &port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  health_server_ = builder.BuildAndStart();
  if (health_server_ == nullptr || port == 0) {
    health_server_.reset();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config_.health_listen->ToString()));
  }
  health_address_ = config_.health_listen;
  health_address_->port = static_cast<uint16_t>(port);
  logging::Info("listening health={} (plaintext, grpc.health.v1 only)",
                health_address_->ToString());
  return absl::OkStatus();
}

absl::Status VerifierServer::StartFetcher() {
  absl::StatusOr<fetch::EgressPolicy> policy = fetch::EgressPolicy::Create(config_.egress);
  if (!policy.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("egress policy: ", policy.status().message()));
  }
  egress_policy_ = std::make_unique<fetch::EgressPolicy>(*std::move(policy));
  fetch::CaresResolverConfig resolver_config;
  resolver_config.servers = config_.dns_servers;
  absl::StatusOr<std::unique_ptr<fetch::CaresResolver>> resolver =
      fetch::CaresResolver::Create(resolver_config);
  if (!resolver.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dns_servers (DNS_SERVERS): ", resolver.status().message()));
  }
  resolver_ = *std::move(resolver);
  absl::StatusOr<std::unique_ptr<fetch::CurlHttpClient>> http =
      fetch::CurlHttpClient::Create({}, egress_policy_.get());
  if (!http.ok()) {
    return http.status();
  }
  http_client_ = *std::move(http);
  fetch_metrics_ = std::make_unique<fetch::FetchMetrics>(*registry_);
  absl::StatusOr<std::unique_ptr<fetch::SafeFetcher>> fetcher =
      fetch::SafeFetcher::Create(config_.fetcher, egress_policy_.get(), resolver_.get(),
                                 http_client_.get(), fetch_metrics_.get());
  if (!fetcher.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("fetch limits: ", fetcher.status().message()));
  }
  fetcher_ = *std::move(fetcher);
  fetch::SafeFetcherConfig delivery_config = config_.fetcher;
  delivery_config.max_redirects = 0;
  delivery_config.total_timeout = config_.delivery_timeout;
  delivery_config.max_per_host = config_.delivery_max_per_destination;
  delivery_config.max_per_address = config_.delivery_max_per_destination;
  absl::StatusOr<std::unique_ptr<fetch::SafeFetcher>> delivery_fetcher =
      fetch::SafeFetcher::Create(delivery_config, egress_policy_.get(), resolver_.get(),
                                 http_client_.get());  // not counted as verification fetches
  if (!delivery_fetcher.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("delivery limits: ", delivery_fetcher.status().message()));
  }
  delivery_fetcher_ = *std::move(delivery_fetcher);
  if (egress_policy_->allow_list_active()) {
    logging::Warn(
        "EGRESS ALLOW LIST ACTIVE (--egress_allow_cidrs): the fetcher may connect to addresses "
        "the SSRF policy refuses; for tests and demos only, NEVER in production");
  }
  return absl::OkStatus();
}

void VerifierServer::BuildSourceVerifier() {
  page_fetcher_ = std::make_unique<verification::SafePageFetcher>(*fetcher_);
  source_analyzer_ = std::make_unique<verification::HtmlSourceAnalyzer>();
  source_verifier_ = std::make_unique<verification::SourceVerifier>(
      *page_fetcher_, *source_analyzer_, config_.verification);
  // Page analysis (parse, link match, mf2, sanitize) off the fetcher's event loop, on one thread
  // per core. A task the pool refuses (only while it stops) runs where it was handed over, so
  // every verification still ends.
  analysis_pool_ = std::make_unique<BlockingPool>(
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), size_t{1} << 20);
  source_verifier_->set_cpu_executor([pool = analysis_pool_.get()](
                                         absl::AnyInvocable<void() &&> task) {
    auto shared = std::make_shared<absl::AnyInvocable<void() &&>>(std::move(task));
    if (!pool->TrySubmit([shared]() mutable { std::move (*shared)(); })) {
      std::move(*shared)();
    }
  });
}

absl::Status VerifierServer::StartAdmin() {
  if (!config_.admin_listen.has_value()) {
    return absl::OkStatus();
  }
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(config_.admin_listen->ToString());
  } catch (const std::exception& error) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", config_.admin_listen->ToString(), ": ", error.what()));
  }
  exposer_->RegisterCollectable(registry_, "/metrics");
  const std::vector<int> ports = exposer_->GetListeningPorts();
  admin_address_ = config_.admin_listen;
  if (!ports.empty()) {
    admin_address_->port = static_cast<uint16_t>(ports.front());
  }
  logging::Info("listening admin={} (GET /metrics)", admin_address_->ToString());
  return absl::OkStatus();
}

void VerifierServer::StopFetcher() {
  // No call is in flight any more (the gRPC server drained). Lookups and transfers still running
  // (none, unless a worker fetches) are answered kCancelled as their loops stop.
  resolver_.reset();
  http_client_.reset();
  fetcher_.reset();
  delivery_fetcher_.reset();
}

VerifierServer::~VerifierServer() {
  if (readiness_thread_.joinable()) {
    Shutdown();  // Started. A failed Start leaves nothing running but what members stop.
  }
}

absl::Status VerifierServer::fatal_error() const {
  absl::MutexLock lock(&mu_);
  return fatal_error_;
}

void VerifierServer::SetServing(bool serving) {
  for (grpc::Server* grpc_server : {grpc_server_.get(), health_server_.get()}) {
    grpc::HealthCheckServiceInterface* health =
        grpc_server == nullptr ? nullptr : grpc_server->GetHealthCheckService();
    if (health == nullptr) {
      continue;
    }
    health->SetServingStatus("", serving);
    health->SetServingStatus(kVerifierServiceName, serving);
  }
}

bool VerifierServer::WaitForStop(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&stopping_), timeout);
}

void VerifierServer::ReadinessLoop() {
  // Phase 1: bring the schema up to date, retrying while the database cannot be reached.
  absl::Duration delay = kFirstRetryDelay;
  while (true) {
    absl::StatusOr<std::vector<int>> applied = migrator_->Apply(config_.database_url);
    if (applied.ok()) {
      break;
    }
    if (!IsRetryable(applied.status())) {
      logging::Error("cannot start: {}", std::string(applied.status().message()));
      {
        absl::MutexLock lock(&mu_);
        fatal_error_ = applied.status();
      }
      if (on_fatal_) {
        on_fatal_();
      }
      return;
    }
    logging::Warn("database not ready, retrying in {}: {}", absl::FormatDuration(delay),
                  std::string(applied.status().message()));
    if (WaitForStop(delay)) {
      return;
    }
    delay = std::min(delay * 2, kMaxRetryDelay);
  }
  // The tokens before the first call: until they are loaded every call would be UNAVAILABLE.
  // A failure here is retried by the registry's refresher (and health keeps pinging).
  if (absl::Status status = token_registry_->Start(); !status.ok()) {
    logging::Warn("{}; retrying every {}", std::string(status.message()),
                  absl::FormatDuration(config_.token_refresh_interval));
  }
  service_->SetReady(true);
  StartWorkers();
  retention_sweeper_->Start();
  StartQueueDepthSampler();

  // Phase 2: serve while the database answers.
  bool serving = false;
  bool first = true;
  while (true) {
    const absl::Status ping = health_store_->Ping();
    if (ping.ok() != serving || first) {
      serving = ping.ok();
      {
        // Shutdown() flips health off for good; do not turn it back on after that.
        absl::MutexLock lock(&mu_);
        if (stopping_) {
          return;
        }
        SetServing(serving);
      }
      if (serving) {
        logging::Info("serving grpc={}", address_.ToString());
      } else {
        logging::Warn("health NOT_SERVING: database does not answer: {}",
                      std::string(ping.message()));
      }
    }
    first = false;
    if (WaitForStop(config_.health_interval)) {
      return;
    }
  }
}

void VerifierServer::StartWorkers() {
  absl::MutexLock lock(&mu_);
  if (stopping_) {
    return;
  }
  if (config_.delivery_workers > 0) {
    delivery::DeliveryWorkerOptions delivery_options;
    delivery_options.owner = queue::MakeWorkerOwner() + "/deliveries";
    delivery_options.threads = config_.delivery_workers;
    delivery_options.timeout = config_.delivery_timeout;
    delivery_options.lease = config_.delivery_lease;
    delivery_worker_ = std::make_unique<delivery::DeliveryWorker>(
        *delivery_store_, *delivery_fetcher_, *registry_, std::move(delivery_options));
    delivery_worker_->Start();
  } else {
    logging::Warn("outbound deliveries DISABLED here (--delivery_workers=0): events are queued "
                  "and sent by verifiers with --delivery_workers above 0");
  }
  if (config_.workers == 0) {
    logging::Warn(
        "verification workers DISABLED (--workers=0): mentions are accepted and queued durably "
        "but nothing verifies them until a verifier runs with --workers above 0 (VerifyNow "
        "still verifies)");
    return;
  }
  job_listener_ = std::make_unique<store::PgJobListener>(config_.database_url);
  queue::WorkerOptions options;
  options.owner = queue::MakeWorkerOwner();
  options.concurrency = config_.workers;
  options.max_in_flight = config_.max_verifications_in_flight;
  options.lease = config_.worker_lease;
  options.poll_interval = config_.worker_poll_interval;
  options.retry = {config_.retry_base, config_.retry_cap, config_.retry_max_attempts};
  worker_ = std::make_unique<queue::VerificationWorker>(*job_store_, *job_listener_,
                                                        *in_flight_verifier_, options);
  worker_->Start();
}

void VerifierServer::StartQueueDepthSampler() {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_depth_sampler_ == nullptr) {
    return;
  }
  queue_depth_sampler_->Start();
}

void VerifierServer::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      return;
    }
    shut_down_ = true;
    stopping_ = true;
    // Under mu_, so the readiness thread cannot turn health back on.
    if (grpc_server_ != nullptr) {
      if (grpc::HealthCheckServiceInterface* health = grpc_server_->GetHealthCheckService()) {
        health->Shutdown();  // Everything NOT_SERVING, and stays so.
      }
    }
    if (health_server_ != nullptr) {
      if (grpc::HealthCheckServiceInterface* health = health_server_->GetHealthCheckService()) {
        health->Shutdown();
      }
    }
  }
  logging::Info("shutting down: health NOT_SERVING, delay={} drain_timeout={}",
                absl::FormatDuration(config_.shutdown_delay),
                absl::FormatDuration(config_.drain_timeout));
  if (config_.shutdown_delay > absl::ZeroDuration()) {
    absl::SleepFor(config_.shutdown_delay);
  }
  if (grpc_server_ != nullptr) {
    // In-flight calls finish on the blocking pool, which is still running.
    grpc_server_->Shutdown(absl::ToChronoTime(absl::Now() + config_.drain_timeout));
  }
  if (health_server_ != nullptr) {
    health_server_->Shutdown(absl::ToChronoTime(absl::Now()));
  }
  if (readiness_thread_.joinable()) {
    readiness_thread_.join();
  }
  if (retention_sweeper_ != nullptr) {
    retention_sweeper_->Stop();
  }
  if (queue_depth_sampler_ != nullptr) {
    queue_depth_sampler_->Stop();
  }
  // The readiness thread (which starts the workers) is gone: verifications in progress finish
  // and are recorded; claimed, unstarted jobs go back to the queue.
  if (worker_ != nullptr) {
    worker_->Stop();
  }
  if (delivery_worker_ != nullptr) {
    delivery_worker_->Stop();  // Attempts in flight are answered (their deadline) and recorded.
  }
  if (verify_now_pool_ != nullptr) {
    verify_now_pool_->Stop();  // Verifications in progress finish and are recorded.
  }
  if (analysis_pool_ != nullptr) {
    analysis_pool_->Stop();  // After every verification that hands it work has ended.
  }
  if (blocking_pool_ != nullptr) {
    blocking_pool_->Stop();
  }
  if (ingest_writer_ != nullptr) {
    ingest_writer_->Stop();  // After the pool, whose evaluations hand it their decisions.
  }
  StopFetcher();
  exposer_.reset();
  logging::Info("stopped");
}

absl::Status MigrateWithRetry(const std::string& database_url, absl::Duration timeout) {
  absl::StatusOr<std::vector<store::Migration>> migrations = store::BuiltinMigrations();
  if (!migrations.ok()) {
    return migrations.status();
  }
  const store::Migrator migrator(*std::move(migrations));
  const absl::Time deadline = absl::Now() + timeout;
  absl::Duration delay = kFirstRetryDelay;
  while (true) {
    absl::StatusOr<std::vector<int>> applied = migrator.Apply(database_url);
    if (applied.ok()) {
      return absl::OkStatus();
    }
    if (!IsRetryable(applied.status())) {
      return applied.status();
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::UnavailableError(absl::StrCat("database unreachable for ",
                                                 absl::FormatDuration(timeout), ": ",
                                                 std::string(applied.status().message())));
    }
    logging::Warn("database not ready, retrying in {}: {}", absl::FormatDuration(delay),
                  std::string(applied.status().message()));
    absl::SleepFor(std::min(delay, left));
    delay = std::min(delay * 2, kMaxRetryDelay);
  }
}

}  // namespace portcullis::verifier::server
