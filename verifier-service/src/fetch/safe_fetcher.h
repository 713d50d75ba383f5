#pragma once

// SafeFetcher: fetches a URL a stranger chose without ever connecting to an address the egress
// policy refuses. Composes the pieces, one hop at a time:
//
//   parse + check the URL (EgressPolicy::ParseAndCheckUrl)
//   → resolve its host, exactly one lookup per hop (Resolver; IP literals are not resolved)
//   → check every answer (EgressPolicy::CheckAddresses: refused if ANY is refused)
//   → pin: fetch from the first checked answer only (HttpClient, which checks it again on connect)
//   → on a redirect: resolve Location against the current URL, check it, next hop (≤ 3 redirects)
//
// Concurrency is bounded per destination host and in total, so that 10,000 webmentions whose
// sources point at one victim never become 10,000 connections to it — neither through one name
// nor through many names for one address. See SSRF-POLICY.md.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/fetch/clock.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/fetch_observer.h"
#include "verifier-service/src/fetch/http_client.h"
#include "verifier-service/src/fetch/resolver.h"

namespace portcullis::verifier::fetch {

// How a fetch ended. kOk returns a body; the others are permanent (retrying will not help) or
// transient (IsTransient: retry later).
enum class FetchOutcome {
  kOk,
  // permanent
  kBadUrl,                  // not a valid URL (start or Location)
  kBadScheme,               // not http(s) (start or Location)
  kForbiddenUrl,            // credentials, port, special-use name, ambiguous spelling
  kForbiddenAddress,        // an IP literal or a DNS answer in a refused block
  kDnsNotFound,             // NXDOMAIN or no A/AAAA
  kTooManyRedirects,        // more than max_redirects
  kBadRedirect,             // a 3xx without a Location
  kTooLarge,                // body over the cap (decoded)
  kUnsupportedContentType,  // a 2xx not of FetchLimits::media_types (HTML by default)
  kHttp4xx,                 // a 4xx other than 410 and 429 (and any other unexpected status)
  kGone,                    // 410
  kTlsFailed,               // the certificate does not verify for the host
  // transient
  kTimeout,           // total deadline or minimum speed
  kConnectionFailed,  // refused, reset, no response
  kDnsTemporary,      // SERVFAIL, no DNS answer in time
  kHttp5xx,
  kHttp429,
  kCancelled,  // the fetcher shut down first
};

// "ok", "forbidden_address", "http_5xx", ... for logs, metrics and the RPC.
absl::string_view FetchOutcomeName(FetchOutcome outcome);
bool IsTransient(FetchOutcome outcome);

struct FetchResult {
  FetchOutcome outcome = FetchOutcome::kOk;
  // Why, for every outcome but kOk: the refused block, the status code, the libcurl error.
  std::string detail;
  // The URL of the last hop attempted (the final URL for kOk).
  std::string final_url;
  // The HTTP status of the last response; 0 when none arrived.
  int status = 0;
  std::string content_type;
  // Retry-After as sent, for kHttp429 and kHttp5xx.
  std::optional<std::string> retry_after;
  // Headers of the last response, as sent, when present.
  std::optional<std::string> location;
  std::optional<std::string> content_length;
  std::optional<std::string> etag;
  std::optional<std::string> last_modified;
  // For kOk only.
  std::string body;
  // Redirects followed.
  int redirects = 0;
};

struct SafeFetcherConfig {
  // Redirects followed at most; the next one is kTooManyRedirects.
  int max_redirects = 3;
  // The whole fetch, every hop and lookup included.
  absl::Duration total_timeout = absl::Seconds(5);
  int64_t max_body_bytes = 1 << 20;
  int64_t low_speed_bytes_per_second = 1024;
  absl::Duration low_speed_time = absl::Seconds(3);
  // Hops to one host name (or IP literal) in flight at once; more wait their turn.
  int max_per_host = 2;
  // Connections to one address in flight at once, whatever names led there (a victim's wildcard
  // DNS gives it endless host names); more wait their turn.
  int max_per_address = 4;
  // Fetches in flight at once; more wait their turn.
  int max_in_flight = 1000;
};

// The least of a fetch's deadline that must remain for a hop (a connection and its request) to
// start: min(250 ms, a tenth of the fetch's budget). A hop granted its host or address slot with
// less left would most likely be abandoned mid-request while the origin still serves it, so it
// is not started: the fetch ends kTimeout (transient, retried later) without contacting anyone.
// A hop that starts at once has its whole budget: only hops that waited for a slot, or redirects
// late in a fetch, are refused.
absl::Duration MinimumHopTime(absl::Duration budget);

// The limits of one fetch; SafeFetcher::Fetch clamps each to the fetcher's config.
struct FetchLimits {
  int max_redirects = 3;
  absl::Duration total_timeout = absl::Seconds(5);
  int64_t max_body_bytes = 1 << 20;
  // The media types (lowercase, without parameters) whose 2xx body is read; any other is
  // kUnsupportedContentType. HTML by default; the avatar proxy asks for image types.
  std::vector<std::string> media_types = {"text/html", "application/xhtml+xml"};
};

// An outbound delivery's request (issue 20): POSTed through the same guard as any fetch.
struct OutboundPost {
  std::string body;
  // Sent as given ("Content-Type", "webhook-id", ...).
  std::vector<std::pair<std::string, std::string>> headers;
};

class SafeFetcher {
 public:
  using Callback = absl::AnyInvocable<void(FetchResult) &&>;

  // Borrows all of them; they must outlive the fetcher and every fetch it started. `observer`
  // (e.g. FetchMetrics) may be null. `clock` decides the deadlines (and the observer's queue
  // times); null is RealClock(). kInvalidArgument for limits that are not positive.
  static absl::StatusOr<std::unique_ptr<SafeFetcher>> Create(SafeFetcherConfig config,
                                                             const EgressPolicy* policy,
                                                             Resolver* resolver, HttpClient* http,
                                                             FetchObserver* observer = nullptr,
                                                             const Clock* clock = nullptr);
  ~SafeFetcher();

  // Fetches `url` (user input: parsed and checked here); calls `done` exactly once, on any thread
  // (possibly before Fetch returns).
  void Fetch(absl::string_view url, Callback done);
  // The same within `limits`, each clamped to the config's (never above it).
  void Fetch(absl::string_view url, FetchLimits limits, Callback done);
  // POSTs `post` to `url` within `limits` (clamped as Fetch's), through the same checks, pinning
  // and per-host limits. A 2xx of any content type is kOk (its body is not read); redirects count
  // against limits.max_redirects (0 for deliveries: a 3xx ends kTooManyRedirects); every other
  // status ends as it does for a fetch (kGone, kHttp429, kHttp5xx, kHttp4xx), with `status` and
  // `retry_after` set.
  void Post(absl::string_view url, OutboundPost post, FetchLimits limits, Callback done);
  // The config's limits: the most any fetch gets.
  FetchLimits max_limits() const {
    return {.max_redirects = config_.max_redirects,
            .total_timeout = config_.total_timeout,
            .max_body_bytes = config_.max_body_bytes};
  }

  const SafeFetcherConfig& config() const { return config_; }

 private:
  class Limiter;
  struct FetchState;

  SafeFetcher(SafeFetcherConfig config, const EgressPolicy* policy, Resolver* resolver,
              HttpClient* http, FetchObserver* observer, const Clock* clock);

  void Start(absl::string_view url, FetchLimits limits, std::optional<OutboundPost> post,
             Callback done);
  void StartHop(std::shared_ptr<FetchState> fetch);
  void Resolved(std::shared_ptr<FetchState> fetch,
                absl::StatusOr<std::vector<net::IpAddress>> answers);
  // Waits for a slot of `address`, then ConnectPinned.
  void Connect(std::shared_ptr<FetchState> fetch, const net::IpAddress& address);
  void ConnectPinned(std::shared_ptr<FetchState> fetch, const net::IpAddress& address);
  void Responded(std::shared_ptr<FetchState> fetch, absl::StatusOr<HttpResponse> response);
  void Finish(std::shared_ptr<FetchState> fetch, FetchOutcome outcome, std::string detail);
  // Classifies a refused start URL or Location, and reports it to the observer under `stage`.
  FetchOutcome RefusedUrl(absl::string_view stage, const absl::Status& status) const;
  // The metric label for a refused address: its block's registry name, or the basis.
  std::string RefusalReason(const net::IpAddress& address) const;

  const SafeFetcherConfig config_;
  const EgressPolicy* const policy_;
  Resolver* const resolver_;
  HttpClient* const http_;
  FetchObserver* const observer_;
  const Clock* const clock_;
  std::unique_ptr<Limiter> limiter_;
};

}  // namespace portcullis::verifier::fetch
