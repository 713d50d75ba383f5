#include "verifier-service/src/server/avatar_rpcs.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/sha256.h"
#include "verifier-service/src/fetch/http_client.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {

namespace v1 = portcullis::verifier::v1;

absl::StatusOr<std::string> ValidateFetchAvatar(const v1::FetchAvatarRequest& request) {
  if (!crypto::IsSha256Hex(request.hash())) {
    return absl::InvalidArgumentError("hash must be 64 lowercase hex digits (a SHA-256)");
  }
  return request.hash();
}

fetch::FetchLimits AvatarFetchLimits() {
  fetch::FetchLimits limits;
  limits.max_redirects = kMaxAvatarRedirects;
  limits.total_timeout = kAvatarFetchTimeout;
  limits.max_body_bytes = kMaxAvatarBytes;
  limits.media_types.clear();
  for (const absl::string_view type : kAvatarMediaTypes) {
    limits.media_types.emplace_back(type);
  }
  return limits;
}

absl::Status AvatarAnswer(fetch::FetchResult result, v1::FetchAvatarResponse* response) {
  if (result.outcome == fetch::FetchOutcome::kOk) {
    response->set_body(std::move(result.body));
    response->set_content_type(fetch::MediaTypeOf(result.content_type));
    response->set_etag(result.etag.value_or(""));
    response->set_last_modified(result.last_modified.value_or(""));
    return absl::OkStatus();
  }
  if (result.outcome == fetch::FetchOutcome::kCancelled || fetch::IsTransient(result.outcome)) {
    return absl::UnavailableError(absl::StrCat(
        "avatar fetch failed (", fetch::FetchOutcomeName(result.outcome), "), retry later"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("avatar not served: ", fetch::FetchOutcomeName(result.outcome)));
}

PORTCULLIS_VERIFIER_RPC(FetchAvatar) {
  return rpcs_.Serve(
      "FetchAvatar", context, request, response, kReadAccess,
      [](const v1::FetchAvatarRequest& request) { return ValidateFetchAvatar(request); },
      OnLoop([this, response](std::string hash, Reply reply) {
        // The lookup blocks (the database): on the pool. The fetch answers from the fetcher's
        // loops. Only a URL the lookup found is ever fetched.
        auto shared = std::make_shared<Reply>(std::move(reply));
        const bool queued = deps_.pool->TrySubmit([this, response, shared, hash]() {
          absl::StatusOr<std::string> photo =
              deps_.public_mentions->FindProxiedPhoto(hash, shared->call().sites());
          if (!photo.ok()) {
            std::move (*shared)(StoreStatus(photo.status(), shared->call()));
            return;
          }
          deps_.fetcher->Fetch(
              *photo, AvatarFetchLimits(), [response, shared](fetch::FetchResult result) {
                const fetch::FetchOutcome outcome = result.outcome;
                const absl::Status status = AvatarAnswer(std::move(result), response);
                if (!status.ok()) {
                  shared->call().Info("avatar refused outcome={}",
                                      std::string(fetch::FetchOutcomeName(outcome)));
                }
                std::move (*shared)(status);
              });
        });
        if (!queued) {
          std::move (*shared)(absl::UnavailableError("verifier overloaded, retry later"));
        }
      }));
}

}  // namespace portcullis::verifier::server
