#include "ingest-gateway/src/gateway.h"

#include <algorithm>
#include <utility>

#include "common/crypto/random.h"
#include "common/metrics/text_exposition.h"
#include "common/status/status_macros.h"
#include "ingest-gateway/src/grpc_review_client.h"
#include "ingest-gateway/src/grpc_verifier_client.h"
#include "ingest-gateway/src/status_page.h"

namespace portcullis::gateway {
namespace {

constexpr size_t kAdminMaxConnections = 64;
constexpr uint64_t kAdminMaxBodyBytes = 4096;

// Stands in for the review client of a gateway built without one (tests of other routes).
class UnavailableReviewClient final : public ReviewClient {
 public:
  void ListReviewQueue(absl::string_view, const std::string&,
                       const verifier::v1::ListReviewQueueRequest&,
                       QueueCallback callback) override {
    callback(absl::UnavailableError("no review client"));
  }
  void ReviewMention(absl::string_view, const std::string&,
                     const verifier::v1::ReviewMentionRequest&, ReviewCallback callback) override {
    callback(absl::UnavailableError("no review client"));
  }
};

}  // namespace

uint64_t PublicBodyLimitForPath(absl::string_view path, uint64_t ingest_max_body_bytes) {
  if (path == kIngestPath) {
    return ingest_max_body_bytes;
  }
  return path == kWebmentionPath ? kWebmentionMaxBodyBytes : 0;
}

absl::StatusOr<std::unique_ptr<Gateway>> Gateway::Create(const GatewayConfig& config) {
  // A missing or wrong certificate file stops startup here, naming the flag.
  ASSIGN_OR_RETURN(const grpc_tls::ChannelSecurity security,
                   grpc_tls::MakeChannelSecurity(config.verifier_tls));
  std::shared_ptr<grpc::Channel> channel =
      MakeVerifierChannel(config.verifier_target, config.verifier_token, security);
  // The review page's own channel carries no token: each call carries the reviewer's.
  std::shared_ptr<grpc::Channel> review_channel =
      MakeVerifierChannel(config.verifier_target, "", security);
  return Create(config, std::make_unique<GrpcVerifierClient>(channel, config.verifier_timeout),
                std::make_unique<AuthorizedHealthChecker>(channel),
                std::make_unique<GrpcReviewClient>(review_channel, config.verifier_timeout));
}

absl::StatusOr<std::unique_ptr<Gateway>> Gateway::Create(
    const GatewayConfig& config, std::unique_ptr<VerifierClient> verifier,
    std::unique_ptr<HealthChecker> health_checker, std::unique_ptr<ReviewClient> review) {
  if (review == nullptr) {
    review = std::make_unique<UnavailableReviewClient>();
  }
  std::unique_ptr<Gateway> gateway(
      new Gateway(config, std::move(verifier), std::move(health_checker), std::move(review)));
  RETURN_IF_ERROR(gateway->Listen());
  return gateway;
}

Gateway::Gateway(const GatewayConfig& config, std::unique_ptr<VerifierClient> verifier,
                 std::unique_ptr<HealthChecker> health_checker,
                 std::unique_ptr<ReviewClient> review)
    : config_(config),
      registry_(std::make_shared<prometheus::Registry>()),
      metrics_(*registry_),
      verifier_(std::move(verifier)),
      health_checker_(std::move(health_checker)),
      review_client_(std::move(review)),
      readiness_(std::make_unique<Readiness>(
          *health_checker_, config.readiness_interval,
          std::min(config.readiness_interval, config.verifier_timeout))),
      client_limiter_({config.client_rate_per_second, config.client_burst},
                      config.rate_limit_max_keys),
      source_host_limiter_({config.source_host_rate_per_second, config.source_host_burst},
                           config.rate_limit_max_keys),
      webmention_(*verifier_, config.retry_after_seconds,
                  RateLimits{.per_client = &client_limiter_,
                             .per_source_host = &source_host_limiter_,
                             .trusted_proxies = config.trusted_proxies}),
      ingest_(*verifier_, {.max_body_bytes = config.ingest_max_body_bytes,
                           .retry_after_seconds = config.retry_after_seconds,
                           .accepted_duplicate_ttl = config.ingest_duplicate_cache_ttl}),
      mentions_(
          *verifier_, config.retry_after_seconds,
          RateLimits{.per_client = &client_limiter_, .trusted_proxies = config.trusted_proxies},
          config.public_base_url),
      review_page_(*review_client_, crypto::RandomHex(32)),
      webmention_io_(
          *verifier_, config.retry_after_seconds,
          RateLimits{.per_client = &client_limiter_, .trusted_proxies = config.trusted_proxies},
          config.public_base_url),
      avatars_(
          *verifier_, std::make_shared<AvatarCache>(config.avatar_cache),
          config.retry_after_seconds,
          RateLimits{.per_client = &client_limiter_, .trusted_proxies = config.trusted_proxies}),
      public_router_(&metrics_),
      admin_router_(nullptr) {
  public_router_.Add("POST", kWebmentionPath,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       webmention_.Submit(request, std::move(respond));
                     });
  public_router_.Add("GET", kStatusRoute,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       webmention_.Status(request, std::move(respond));
                     });
  public_router_.Add("GET", kStatusStylesheetPath, [](const http::HttpRequest&, http::Respond respond) {
    respond(StatusStylesheetResponse());
  });
  public_router_.Add("POST", kIngestPath,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       ingest_.Handle(request, std::move(respond));
                     });
  // The public jf2 feed, readable from any origin (CORS preflight answered).
  public_router_.Add("GET", kMentionsPath,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       mentions_.Handle(request, std::move(respond));
                     });
  // The avatar proxy (issue 17): images of proxying sites' authors, cached.
  public_router_.Add("GET", kAvatarRoute,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       avatars_.Handle(request, std::move(respond));
                     });
  public_router_.Add("OPTIONS", kMentionsPath, [](const http::HttpRequest&, http::Respond respond) {
    respond(MentionsPreflightResponse());
  });
  // webmention.io's read API (webmention_io_api.h), public and CORS-readable like the feed.
  public_router_.Add("GET", kApiMentionsPath,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       webmention_io_.Mentions(request, std::move(respond));
                     });
  public_router_.Add("GET", kApiCountPath,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       webmention_io_.Count(request, std::move(respond));
                     });
  public_router_.Add("GET", kApiChangesPath,
                     [this](const http::HttpRequest& request, http::Respond respond) {
                       webmention_io_.Changes(request, std::move(respond));
                     });
  for (const char* path : {kApiMentionsPath, kApiCountPath, kApiChangesPath}) {
    public_router_.Add("OPTIONS", path, [](const http::HttpRequest&, http::Respond respond) {
      respond(MentionsPreflightResponse());
    });
  }
  // Probes are answered on both listeners (load balancers often probe the serving port);
  // /metrics only on the admin listener.
  for (http::Router* router : {&public_router_, &admin_router_}) {
    router->Add("GET", "/healthz", [](const http::HttpRequest&, http::Respond respond) {
      respond(HealthzResponse());
    });
    router->Add("GET", "/readyz", [this](const http::HttpRequest&, http::Respond respond) {
      respond(readiness_->ReadyzResponse());
    });
  }
  // The review page (issue 16): the admin listener only, never the public one.
  admin_router_.Add("GET", kReviewPath, [this](const http::HttpRequest& request,
                                               http::Respond respond) {
    review_page_.Show(request, std::move(respond));
  });
  admin_router_.Add("POST", kReviewLoginPath, [this](const http::HttpRequest& request,
                                                     http::Respond respond) {
    review_page_.LogIn(request, std::move(respond));
  });
  admin_router_.Add("POST", kReviewActionPath, [this](const http::HttpRequest& request,
                                                      http::Respond respond) {
    review_page_.Act(request, std::move(respond));
  });
  admin_router_.Add("POST", kReviewLogoutPath, [this](const http::HttpRequest& request,
                                                      http::Respond respond) {
    review_page_.LogOut(request, std::move(respond));
  });
  admin_router_.Add("GET", kReviewStylesheetPath, [](const http::HttpRequest&,
                                                     http::Respond respond) {
    respond(ReviewStylesheetResponse());
  });
  admin_router_.Add("GET", "/metrics", [this](const http::HttpRequest&, http::Respond respond) {
    metrics_.SetReady(readiness_->IsReady());
    http::HttpResponse response;
    response.headers.Set("Content-Type", metrics::kTextContentType);
    response.body = metrics::RenderText(*registry_);
    respond(std::move(response));
  });
}

Gateway::~Gateway() {
  if (http_server_ != nullptr) {
    http_server_->Stop();
  }
  if (admin_server_ != nullptr) {
    admin_server_->Stop();
  }
  readiness_->Stop();
  // No handler runs any more, but calls in flight still answer: their Responds read the routers'
  // route labels and the handlers' state, which go before these clients would (declaration
  // order). Each client's destructor waits for its calls, so the last answers come now.
  verifier_.reset();
  review_client_.reset();
}

absl::Status Gateway::Listen() {
  http::HttpServerOptions options;
  options.name = "http";
  options.listen = config_.http_listen;
  options.io_threads = config_.io_threads;
  options.max_connections = config_.max_connections;
  options.max_connections_per_address = config_.max_connections_per_address;
  options.per_address_exempt = config_.trusted_proxies;
  options.retry_after_seconds = config_.retry_after_seconds;
  options.max_body_bytes = config_.max_body_bytes;
  options.body_limit_for_path = [ingest_limit =
                                     config_.ingest_max_body_bytes](absl::string_view path) {
    return PublicBodyLimitForPath(path, ingest_limit);
  };
  options.max_header_bytes = config_.max_header_bytes;
  options.read_timeout = config_.read_timeout;
  options.idle_timeout = config_.idle_timeout;
  options.write_timeout = config_.write_timeout;
  options.on_connection_rejected = [this] { metrics_.OnConnectionRejected(); };
  options.on_connection_rejected_per_address = [this] {
    metrics_.OnConnectionRejectedPerAddress();
  };
  options.on_protocol_error = [this](int status) { metrics_.OnProtocolError(status); };
  ASSIGN_OR_RETURN(http_server_, http::HttpServer::Create(options, public_router_.AsHandler()));

  http::HttpServerOptions admin = options;
  admin.name = "admin";
  admin.listen = config_.admin_listen;
  admin.io_threads = 1;
  admin.max_connections = kAdminMaxConnections;
  admin.max_body_bytes = kAdminMaxBodyBytes;
  admin.body_limit_for_path = nullptr;
  admin.on_connection_rejected = nullptr;
  admin.max_connections_per_address = 0;
  admin.on_connection_rejected_per_address = nullptr;
  admin.on_protocol_error = nullptr;
  ASSIGN_OR_RETURN(admin_server_, http::HttpServer::Create(admin, admin_router_.AsHandler()));
  return absl::OkStatus();
}

void Gateway::Start() {
  readiness_->Start();
  admin_server_->Start();
  http_server_->Start();
}

void Gateway::BeginShutdown() { readiness_->SetDraining(); }

bool Gateway::Drain(absl::Time deadline) {
  readiness_->SetDraining();
  const bool drained = http_server_->Drain(deadline);
  admin_server_->Stop();
  readiness_->Stop();
  return drained;
}

}  // namespace portcullis::gateway
