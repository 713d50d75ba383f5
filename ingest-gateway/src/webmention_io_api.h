#pragma once

// webmention.io's read API on the gateway's public port (issue 18), for the clients that already
// speak it (webmention.js, Eleventy and Jekyll plugins, hand-written fetch scripts): change the
// base URL from https://webmention.io to the gateway and nothing else.
//
//   GET /api/mentions.jf2  target | target[] | domain, per-page, page, sort-by, sort-dir,
//                          wm-property | wm-property[], since, since_id, token
//   GET /api/count.json    target | target[]
//   GET /api/changes       domain, after, limit: every mention that appeared, changed or
//                          disappeared since `after`, removals as {"wm-id": N, "deleted": true}
//
// Public-safe like /mentions: the public's mentions only (the verifier's one public predicate),
// sanitized HTML only, CORS for any origin, ETag, the per-client rate limit, and a limit on
// every parameter. The pieces are pure functions; WebmentionIoApi wires them to the verifier.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "boost/json/object.hpp"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/verifier_client.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "portcullis/verifier/v1/verifier.pb.h"

namespace portcullis::gateway {

inline constexpr char kApiMentionsPath[] = "/api/mentions.jf2";
inline constexpr char kApiCountPath[] = "/api/count.json";
inline constexpr char kApiChangesPath[] = "/api/changes";
// Counts change with every mention: reused for a short while only.
inline constexpr int kApiCountMaxAgeSeconds = 30;
inline constexpr int kMaxApiTargets = 20;
inline constexpr int kMaxApiPageSize = 100;
inline constexpr int kDefaultApiPageSize = 20;
inline constexpr int kMaxApiChanges = 1000;
inline constexpr int kDefaultApiChanges = 100;

// A validated /api/mentions.jf2 query: the ListPublicMentions request it asks for.
absl::StatusOr<verifier::v1::ListPublicMentionsRequest> ParseApiMentionsQuery(
    absl::string_view query);

// A validated /api/count.json query.
absl::StatusOr<verifier::v1::CountPublicMentionsRequest> ParseApiCountQuery(absl::string_view query);

// A validated /api/changes query.
absl::StatusOr<verifier::v1::ListMentionChangesRequest> ParseApiChangesQuery(
    absl::string_view query);

// The time of a `since` parameter: RFC 3339 / ISO 8601 with seconds and an offset (Z or ±hh:mm
// or ±hhmm), or a date alone (midnight UTC). nullopt when it is none of those.
std::optional<absl::Time> ParseSinceTime(absl::string_view text);

// One mention as webmention.io's jf2 entry: /mentions' entry with a numeric wm-id, the target
// under the entry's property ("in-reply-to": target, ...), wm-protocol and wm-private.
// Proxied author photos as Jf2Entry points them.
boost::json::object ApiJf2Entry(const verifier::v1::Mention& mention,
                                absl::string_view public_base_url = "");

// {"type":"feed","name":"Webmentions","children":[...]}.
std::string RenderApiMentions(const verifier::v1::ListPublicMentionsResponse& page,
                              absl::string_view public_base_url = "");

// {"count":N,"type":{"like":…,"mention":…,"reply":…,"repost":…,"bookmark":…,"rsvp":…}}.
std::string RenderApiCount(const verifier::v1::CountPublicMentionsResponse& counts);

// {"children":[entry | {"wm-id":N,"deleted":true}, ...],"next":"CURSOR"}.
std::string RenderApiChanges(const verifier::v1::ListMentionChangesResponse& page,
                             absl::string_view public_base_url = "");

class WebmentionIoApi {
 public:
  // `verifier` and the limiter must outlive the API.
  // `public_base_url`: where the entries point proxied author photos (ProxiedPhotoUrl).
  WebmentionIoApi(VerifierClient& verifier, int retry_after_seconds, RateLimits limits = {},
                  std::string public_base_url = "")
      : verifier_(verifier),
        retry_after_seconds_(retry_after_seconds),
        limits_(std::move(limits)),
        public_base_url_(std::move(public_base_url)) {}

  // 200 JSON (ETag, Cache-Control, CORS), 304 when If-None-Match matches, 400 invalid_request
  // for a bad parameter, 429 over the client's rate, 503 + Retry-After when the verifier is
  // unavailable.
  void Mentions(const http::HttpRequest& request, http::Respond respond) const;
  void Count(const http::HttpRequest& request, http::Respond respond) const;
  void Changes(const http::HttpRequest& request, http::Respond respond) const;

 private:
  // False (and answered 429) when the client is over its rate.
  bool Admit(const http::HttpRequest& request, http::Respond& respond) const;

  VerifierClient& verifier_;
  const int retry_after_seconds_;
  const RateLimits limits_;
  const std::string public_base_url_;
};

}  // namespace portcullis::gateway
