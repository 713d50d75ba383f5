#pragma once

// GET /avatar/<hash>: the avatar proxy (issue 17). A site that turns it on (`portcullis site set
// DOMAIN --avatar-proxy=on`) has its public feeds reference author photos here instead of on the
// author's host, so readers' browsers never contact that host. The verifier fetches only a photo
// of a mention the public sees on such a site (FetchAvatar: looked up by the hash, image types
// only, 512 KiB, its own short deadline); the gateway keeps what it fetched in a bounded cache.

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/avatar_cache.h"
#include "ingest-gateway/src/http/http_message.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/verifier_client.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "portcullis/verifier/v1/verifier.pb.h"

namespace portcullis::gateway {

inline constexpr char kAvatarPathPrefix[] = "/avatar/";
inline constexpr char kAvatarRoute[] = "/avatar/{hash}";
// How long browsers and shared caches may keep an avatar.
inline constexpr int kAvatarMaxAgeSeconds = 86400;

// Whether the gateway serves `media_type` as an avatar: image/jpeg, image/png, image/gif,
// image/webp or image/avif (what FetchAvatar promises; checked again here).
bool IsAvatarMediaType(absl::string_view media_type);

// Where the public feeds point `author`'s photo when the site proxies it (the verifier set
// photo_proxy_hash): "<public_base_url>/avatar/<hash>", or "/avatar/<hash>" when no base URL is
// configured. Empty when the photo is not proxied (the feed keeps the remote URL).
std::string ProxiedPhotoUrl(const verifier::v1::Author& author, absl::string_view public_base_url);

// The 200 answer for a cached avatar: its bytes and type, the gateway's ETag, Cache-Control
// public for kAvatarMaxAgeSeconds, nosniff, a CSP that allows nothing (an SVG or HTML smuggled
// in can run nothing), CORS open; or 304 without a body when `if_none_match` matches.
http::HttpResponse AvatarResponse(const CachedAvatar& avatar, absl::string_view if_none_match);

class AvatarProxy {
 public:
  // `verifier` and the limiter must outlive the proxy; the cache is shared with the calls in
  // flight.
  AvatarProxy(VerifierClient& verifier, std::shared_ptr<AvatarCache> cache, int retry_after_seconds,
              RateLimits limits = {})
      : verifier_(verifier),
        cache_(std::move(cache)),
        retry_after_seconds_(retry_after_seconds),
        limits_(std::move(limits)) {}

  // GET /avatar/{hash}: 200 image (from the cache, or fetched and cached); 304 on If-None-Match;
  // 404 for a malformed hash or one the verifier does not know (nothing fetched); 502 when the
  // author's host sent no acceptable image (not an image type, too large, refused, 4xx); 429
  // over the client's rate (counted on cache misses only); 503 + Retry-After when the verifier or
  // the author's host is unavailable.
  void Handle(const http::HttpRequest& request, http::Respond respond) const;

 private:
  VerifierClient& verifier_;
  const std::shared_ptr<AvatarCache> cache_;
  const int retry_after_seconds_;
  const RateLimits limits_;
};

}  // namespace portcullis::gateway
