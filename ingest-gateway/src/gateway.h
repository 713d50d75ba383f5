#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/avatar_proxy.h"
#include "ingest-gateway/src/gateway_config.h"
#include "ingest-gateway/src/gateway_metrics.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/http/router.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "ingest-gateway/src/mentions_feed.h"
#include "ingest-gateway/src/readiness.h"
#include "ingest-gateway/src/review_client.h"
#include "ingest-gateway/src/review_page.h"
#include "ingest-gateway/src/verifier_client.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "ingest-gateway/src/webmention_io_api.h"
#include "prometheus/registry.h"

namespace portcullis::gateway {

// The public listener's per-path body cap (HttpServerOptions::body_limit_for_path): POST /ingest
// `ingest_max_body_bytes`, POST /webmention kWebmentionMaxBodyBytes, others none (0).
uint64_t PublicBodyLimitForPath(absl::string_view path, uint64_t ingest_max_body_bytes);

// The whole gateway: the public HTTP listener (webmention routes, /healthz, /readyz), the admin
// listener (/healthz, /readyz, /metrics, the review page /admin/review), the verifier client and
// the readiness poller.
class Gateway {
 public:
  // Binds both listeners and builds one channel to `config.verifier_target`.
  static absl::StatusOr<std::unique_ptr<Gateway>> Create(const GatewayConfig& config);
  // The same with the verifier edges given (tests).
  // The same with the verifier edges given (tests). Without `review`, the review page answers
  // every call to the verifier with the verifier-unavailable page.
  static absl::StatusOr<std::unique_ptr<Gateway>> Create(
      const GatewayConfig& config, std::unique_ptr<VerifierClient> verifier,
      std::unique_ptr<HealthChecker> health_checker,
      std::unique_ptr<ReviewClient> review = nullptr);

  ~Gateway();

  // Starts serving and polling the verifier's health.
  void Start();

  // After SIGTERM: /readyz answers 503 from now on; requests are still served.
  void BeginShutdown();

  // Stops accepting, finishes requests in progress (until `deadline`), then stops everything.
  // True when every connection finished in time.
  bool Drain(absl::Time deadline);

  std::string http_address() const { return http_server_->address(); }
  std::string admin_address() const { return admin_server_->address(); }
  uint16_t http_port() const { return http_server_->port(); }
  uint16_t admin_port() const { return admin_server_->port(); }
  Readiness& readiness() { return *readiness_; }

 private:
  Gateway(const GatewayConfig& config, std::unique_ptr<VerifierClient> verifier,
          std::unique_ptr<HealthChecker> health_checker, std::unique_ptr<ReviewClient> review);
  absl::Status Listen();

  const GatewayConfig config_;
  // Declaration order is destruction order reversed: the servers go first (no new work), the
  // verifier client waits for its calls, and metrics outlive every callback that records them.
  std::shared_ptr<prometheus::Registry> registry_;
  GatewayMetrics metrics_;
  std::unique_ptr<VerifierClient> verifier_;
  std::unique_ptr<HealthChecker> health_checker_;
  // The review page's calls, with each reviewer's token (issue 16).
  std::unique_ptr<ReviewClient> review_client_;
  std::unique_ptr<Readiness> readiness_;
  RateLimiter client_limiter_;
  RateLimiter source_host_limiter_;
  WebmentionHandlers webmention_;
  IngestHandler ingest_;
  MentionsFeed mentions_;
  ReviewPage review_page_;
  WebmentionIoApi webmention_io_;
  // The avatar proxy (issue 17); its cache is shared with the calls in flight.
  AvatarProxy avatars_;
  http::Router public_router_;
  http::Router admin_router_;
  std::unique_ptr<http::HttpServer> http_server_;
  std::unique_ptr<http::HttpServer> admin_server_;
};

}  // namespace portcullis::gateway
