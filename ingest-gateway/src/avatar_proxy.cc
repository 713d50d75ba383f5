#include "ingest-gateway/src/avatar_proxy.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging/log.h"
#include "common/crypto/sha256.h"
#include "ingest-gateway/src/answers.h"
#include "ingest-gateway/src/mentions_feed.h"
#include "ingest-gateway/src/rate_limiter.h"

namespace portcullis::gateway {

namespace v1 = verifier::v1;
using http::HttpResponse;

bool IsAvatarMediaType(absl::string_view media_type) {
  for (const absl::string_view allowed :
       {"image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"}) {
    if (media_type == allowed) {
      return true;
    }
  }
  return false;
}

std::string ProxiedPhotoUrl(const v1::Author& author, absl::string_view public_base_url) {
  if (author.photo().empty() || !crypto::IsSha256Hex(author.photo_proxy_hash())) {
    return "";
  }
  return absl::StrCat(public_base_url, kAvatarPathPrefix, author.photo_proxy_hash());
}

HttpResponse AvatarResponse(const CachedAvatar& avatar, absl::string_view if_none_match) {
  HttpResponse response;
  response.headers.Set("ETag", avatar.etag);
  response.headers.Set("Cache-Control", absl::StrCat("public, max-age=", kAvatarMaxAgeSeconds));
  response.headers.Set("X-Content-Type-Options", "nosniff");
  response.headers.Set("Content-Security-Policy", "default-src 'none'; sandbox");
  response.headers.Set("Access-Control-Allow-Origin", "*");
  response.headers.Set("Cross-Origin-Resource-Policy", "cross-origin");
  if (!if_none_match.empty() && IfNoneMatchMatches(if_none_match, avatar.etag)) {
    return Answered(Answer::kAvatarNotModified, std::move(response));
  }
  response.headers.Set("Content-Type", avatar.content_type);
  response.body = avatar.body;
  return Answered(Answer::kAvatar, std::move(response));
}

void AvatarProxy::Handle(const http::HttpRequest& request, http::Respond respond) const {
  const std::string& hash = request.path_param;
  if (!crypto::IsSha256Hex(hash)) {
    respond(ErrorAnswer(Answer::kAvatarNotFound));
    return;
  }
  const std::string if_none_match(request.headers.Get("If-None-Match").value_or(""));
  const absl::Time now = limits_.now();
  if (std::shared_ptr<const CachedAvatar> cached = cache_->Get(hash, now)) {
    respond(AvatarResponse(*cached, if_none_match));
    return;
  }
  // Only what reaches the verifier counts against the client's rate.
  if (limits_.per_client != nullptr) {
    const std::string key = ClientKey(
        request.client_address, request.headers.Get("X-Forwarded-For"), limits_.trusted_proxies);
    const absl::Duration wait = limits_.per_client->Acquire(key, now);
    if (wait > absl::ZeroDuration()) {
      respond(RateLimitedResponse(wait, "address"));
      return;
    }
  }
  v1::FetchAvatarRequest fetch;
  fetch.set_hash(hash);
  verifier_.FetchAvatar(
      request.request_id, fetch,
      [cache = cache_, now_fn = limits_.now, retry_after = retry_after_seconds_,
       respond = std::move(respond), request_id = request.request_id, hash,
       if_none_match](absl::StatusOr<v1::FetchAvatarResponse> result) {
        if (!result.ok()) {
          const Answer answer = AvatarFailure(result.status().code());
          if (answer != Answer::kAvatarNotFound) {
            logging::Warn("request_id={} FetchAvatar failed: {}", request_id,
                          result.status().ToString());
          }
          respond(answer == Answer::kAvatarNotFound || answer == Answer::kAvatarRefused
                      ? ErrorAnswer(answer)
                      : ResponseForStatus(result.status(), retry_after));
          return;
        }
        if (!IsAvatarMediaType(result->content_type())) {
          logging::Warn("request_id={} FetchAvatar answered type {}", request_id,
                        result->content_type());
          respond(ErrorAnswer(Answer::kAvatarRefused));
          return;
        }
        CachedAvatar avatar;
        avatar.etag = StrongEtag(result->body());
        avatar.content_type = result->content_type();
        avatar.body = std::move(*result->mutable_body());
        HttpResponse response = AvatarResponse(avatar, if_none_match);
        cache->Put(hash, std::move(avatar), now_fn());
        respond(std::move(response));
      });
}

}  // namespace portcullis::gateway
