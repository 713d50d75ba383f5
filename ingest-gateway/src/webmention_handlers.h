#pragma once

#include <functional>
#include <vector>

#include "absl/time/clock.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/rate_limiter.h"
#include "ingest-gateway/src/verifier_client.h"

// The W3C Webmention receiver routes: the HTTP side of SubmitMention and GetMention.
namespace portcullis::gateway {

// The per-route body cap of POST /webmention (a form with two URLs needs far less).
inline constexpr uint64_t kWebmentionMaxBodyBytes = 64 * 1024;

inline constexpr char kWebmentionPath[] = "/webmention";
inline constexpr char kStatusPathPrefix[] = "/webmention/status/";
inline constexpr char kStatusRoute[] = "/webmention/status/{id}";

// The rate limits the routes apply; null limiters limit nothing.
struct RateLimits {
  RateLimiter* per_client = nullptr;       // Every webmention route, by ClientKey.
  RateLimiter* per_source_host = nullptr;  // POST /webmention, by the source's host.
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Reverse proxies whose X-Forwarded-For is believed (see ClientKey); empty: none.
  std::vector<net::Cidr> trusted_proxies;
};

class WebmentionHandlers {
 public:
  // `verifier` and the limiters must outlive the handlers.
  WebmentionHandlers(VerifierClient& verifier, int retry_after_seconds, RateLimits limits = {})
      : verifier_(verifier),
        retry_after_seconds_(retry_after_seconds),
        limits_(std::move(limits)) {}

  // POST /webmention: form with exactly one `source` and one `target` → SubmitMention.
  // 202 + Location on acceptance; 400 with a specific code otherwise; 429 + Retry-After when the
  // client address or the source host is over its rate; 503 + Retry-After when the verifier is
  // unavailable.
  void Submit(const http::HttpRequest& request, http::Respond respond) const;

  // GET /webmention/status/{id} → GetMention → 200 JSON, or an escaped HTML page when `Accept`
  // prefers text/html (NegotiateStatusFormat); 406 when it accepts neither; 404 for an unknown
  // or malformed id; 429 + Retry-After when the client address is over its rate.
  void Status(const http::HttpRequest& request, http::Respond respond) const;

 private:
  // The per-client key of `request`.
  std::string ClientKeyOf(const http::HttpRequest& request) const;
  // A 429 when `limiter` has no token for `key` now.
  std::optional<http::HttpResponse> OverLimit(RateLimiter* limiter, absl::string_view key,
                                              absl::string_view what) const;

  VerifierClient& verifier_;
  const int retry_after_seconds_;
  const RateLimits limits_;
};

// 429 rate_limited with Retry-After: `wait` rounded up to whole seconds, at least 1.
http::HttpResponse RateLimitedResponse(absl::Duration wait, absl::string_view what);

// True for Content-Type application/x-www-form-urlencoded, with or without parameters.
bool IsFormContentType(absl::string_view content_type);

// "PENDING" for MENTION_STATE_PENDING.
std::string StateName(verifier::v1::MentionState state);

}  // namespace portcullis::gateway
