#pragma once

// The avatar proxy's RPC (issue 17, FetchAvatar): validation, the fetch limits, the mapping of a
// fetch result to the answer, and the handler (a VerifierService member, avatar_rpcs.cc): the
// photo URL is looked up by its hash on the blocking pool, among the mentions the public sees on
// sites that turned the proxy on, and only then fetched through the SafeFetcher.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::server {

// The largest avatar fetched, the deadline of its fetch and the redirects it may follow.
inline constexpr int64_t kMaxAvatarBytes = 512 * 1024;
// Under the gateway's default --verifier_timeout (2s), so the answer arrives before it gives up.
inline constexpr absl::Duration kAvatarFetchTimeout = absl::Milliseconds(1500);
inline constexpr int kMaxAvatarRedirects = 2;

// The image media types an avatar may have.
inline constexpr absl::string_view kAvatarMediaTypes[] = {"image/jpeg", "image/png", "image/gif",
                                                          "image/webp", "image/avif"};

// The hash of the request, or INVALID_ARGUMENT.
absl::StatusOr<std::string> ValidateFetchAvatar(
    const portcullis::verifier::v1::FetchAvatarRequest& request);

// The limits of an avatar fetch: kMaxAvatarBytes, kAvatarFetchTimeout, kMaxAvatarRedirects, image
// types only (the fetcher clamps them to its own).
fetch::FetchLimits AvatarFetchLimits();

// A fetch result as FetchAvatar answers it: kOk fills `response`; a transient outcome (or the
// fetcher shutting down) is UNAVAILABLE; any other (not an image, too large, refused address,
// 4xx, ...) FAILED_PRECONDITION naming the outcome.
absl::Status AvatarAnswer(fetch::FetchResult result,
                          portcullis::verifier::v1::FetchAvatarResponse* response);

}  // namespace portcullis::verifier::server
