#pragma once

// The fetch RPCs (CheckUrl, SafeFetch): request validation, limit clamping, the mapping of fetch
// results to responses, and the handlers (VerifierService members, fetch_rpcs.cc), which answer
// from the resolver's and the fetcher's event loops.

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/net/ip_address.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::server {

// Longest URL the fetch RPCs accept, as SubmitMention.
inline constexpr size_t kMaxFetchUrlBytes = 2048;

// The rules written on CheckUrlRequest: kInvalidArgument when broken.
absl::Status Validate(const portcullis::verifier::v1::CheckUrlRequest& request);

// The rules written on SafeFetchRequest, then the caller's limits clamped to `max` (0 or unset
// means `max`): kInvalidArgument when broken.
absl::StatusOr<fetch::FetchLimits> Validate(
    const portcullis::verifier::v1::SafeFetchRequest& request, const fetch::FetchLimits& max);

// A refused URL (from EgressPolicy::ParseAndCheckUrl) as a CheckUrl answer: bad_scheme, bad_url,
// or what the policy says it refused (fetch::RefusalOf): forbidden_address or forbidden_url.
void RefuseUrl(const absl::Status& status, portcullis::verifier::v1::CheckUrlResponse* response);

// A resolver failure as a CheckUrl answer (kCancelled is not an answer: the caller retries).
void RefuseLookup(const absl::Status& status, portcullis::verifier::v1::CheckUrlResponse* response);

// The addresses and the policy's verdict on them as a CheckUrl answer.
void AnswerAddresses(absl::Span<const net::IpAddress> addresses, const absl::Status& verdict,
                     portcullis::verifier::v1::CheckUrlResponse* response);

// A fetch result as a SafeFetch answer.
void ToProto(const fetch::FetchResult& result, const fetch::FetchLimits& limits,
             portcullis::verifier::v1::SafeFetchResponse* response);

}  // namespace portcullis::verifier::server
