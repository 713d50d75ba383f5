#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boost/json/object.hpp"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/verifier_client.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "portcullis/verifier/v1/verifier.pb.h"

// GET /mentions?target=URL | ?site=DOMAIN: the public read side, a jf2 feed of VERIFIED mentions
// for sites that render them in the browser (https://jf2.spec.indieweb.org/, in the shape
// webmention.io serves). The pieces are pure functions; MentionsFeed wires them to ListMentions.
namespace portcullis::gateway {

inline constexpr char kMentionsPath[] = "/mentions";
inline constexpr char kJf2FeedContentType[] = "application/jf2feed+json";
// How long browsers and caches may reuse a feed without asking again.
inline constexpr int kMentionsFeedMaxAgeSeconds = 60;
inline constexpr int kDefaultFeedPageSize = 20;
inline constexpr int kMaxFeedPageSize = 100;
// Longest target URL and page token accepted (the verifier's URL cap; tokens are far shorter).
inline constexpr size_t kMaxFeedTargetBytes = 2048;
inline constexpr size_t kMaxFeedTokenBytes = 256;

// A validated feed query.
struct FeedQuery {
  std::string target;  // Exactly one of target and site is set.
  std::string site;
  int per_page = kDefaultFeedPageSize;
  std::string page;  // The verifier's page token; empty for the first page.
};

// Reads the query string: exactly one `target` or `site`, optional `per-page` (1 to
// kMaxFeedPageSize) and `page`; a parameter given twice is an error. InvalidArgument with a
// sentence safe to show otherwise. Other parameters are ignored (cache busters).
absl::StatusOr<FeedQuery> ParseFeedQuery(absl::string_view query);

// The ListMentions request of a feed query: the public's mentions only (shown_only, VERIFIED).
verifier::v1::ListMentionsRequest ToListRequest(const FeedQuery& query);

// The path and query of the next page ("/mentions?target=...&per-page=N&page=TOKEN").
std::string NextPageUrl(const FeedQuery& query, absl::string_view next_page_token);

// "in-reply-to", "like-of", "repost-of", "bookmark-of", "rsvp" or "mention-of".
absl::string_view WmProperty(verifier::v1::MentionType type);

// One mention as a jf2 entry; empty strings are left out. The author's photo is the avatar
// proxy's URL (ProxiedPhotoUrl, under `public_base_url`) when the mention's site proxies photos.
boost::json::object Jf2Entry(const verifier::v1::Mention& mention,
                             absl::string_view public_base_url = "");

// The feed body: {"type":"feed","children":[...]} plus "next" when `next_url` is not empty.
std::string RenderJf2Feed(const verifier::v1::ListMentionsResponse& page,
                          absl::string_view next_url, absl::string_view public_base_url = "");

// A strong entity tag for `body`: a quoted SHA-256 hex digest.
std::string StrongEtag(absl::string_view body);

// Whether an If-None-Match header value matches `etag` (RFC 9110 §13.1.2: "*", or any listed tag
// by weak comparison).
bool IfNoneMatchMatches(absl::string_view if_none_match, absl::string_view etag);

// The CORS headers every /mentions answer carries (any origin may read the public feed).
void AddFeedCorsHeaders(http::HttpResponse& response);

// The answer to a CORS preflight (OPTIONS /mentions): 204 with the allowed method and headers.
http::HttpResponse MentionsPreflightResponse();

class MentionsFeed {
 public:
  // `verifier` and the limiters must outlive the feed.
  // `public_base_url`: where the feed points proxied author photos (ProxiedPhotoUrl).
  MentionsFeed(VerifierClient& verifier, int retry_after_seconds, RateLimits limits = {},
               std::string public_base_url = "")
      : verifier_(verifier),
        retry_after_seconds_(retry_after_seconds),
        limits_(std::move(limits)),
        public_base_url_(std::move(public_base_url)) {}

  // GET /mentions: 200 jf2 feed (ETag, Link rel=next, Cache-Control, CORS); 304 when
  // If-None-Match matches; 400 for a missing or invalid parameter; 429 over the client's rate;
  // 503 + Retry-After when the verifier is unavailable.
  void Handle(const http::HttpRequest& request, http::Respond respond) const;

 private:
  VerifierClient& verifier_;
  const int retry_after_seconds_;
  const RateLimits limits_;
  const std::string public_base_url_;
};

}  // namespace portcullis::gateway
