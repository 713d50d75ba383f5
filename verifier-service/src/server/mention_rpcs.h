#pragma once

// The mention RPCs (SubmitMention, GetMention, ListMentions): request validation, the mapping of
// stored mentions to the proto, and the handlers (VerifierService members, mention_rpcs.cc).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/crypto/sha256.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/store/mention_store.h"

namespace portcullis::verifier::server {

// Longest target URL ListMentions accepts, as SubmitMention.
inline constexpr size_t kMaxListTargetBytes = 2048;

// The rules written on ListMentionsRequest, as a store query: exactly one of `domain` (a host,
// as AddSite reads it) and `target` (an absolute http(s) URL without credentials, at most 2048
// bytes, matched by its mention key), a known state and type (unspecified: any), page_size 0
// (100) to 1000, a page token this service returned. INVALID_ARGUMENT, with a sentence safe to
// return, otherwise.
absl::StatusOr<store::MentionQuery> Validate(
    const portcullis::verifier::v1::ListMentionsRequest& request,
    const url::TrackingParameters& tracking);

// The above, and PERMISSION_DENIED unless the site it reads is within the caller's binding.
absl::StatusOr<store::MentionQuery> Validate(
    const portcullis::verifier::v1::ListMentionsRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);

// The mention key's target half of `target`, as intake computes it: INVALID_ARGUMENT (a sentence
// safe to return) unless it is an absolute http(s) URL without credentials, whitespace or
// control characters, of at most kMaxListTargetBytes.
absl::StatusOr<crypto::Sha256Digest> TargetHash(const std::string& target,
                                                const url::TrackingParameters& tracking);

// SubmitMention's rules (intake::Validate) on `source` and `target`: the mention to store, or
// the rejection that answers the call; PERMISSION_DENIED when the target's site is outside the
// caller's binding. VerifyNow takes the same.
absl::StatusOr<OrRejection<store::NewMention>> ValidateSubmission(
    const std::string& source, const std::string& target, const url::TrackingParameters& tracking,
    const auth::Caller& caller);

// One item of a SubmitMentions call, validated: its request id (empty when the caller sent
// none usable) and SubmitMention's verdict on it (an error is the item's answer, not the call's).
struct SubmissionItem {
  std::string request_id;
  absl::StatusOr<OrRejection<store::NewMention>> verdict;
};

// SubmitMentions: INVALID_ARGUMENT unless it holds 1 to kMaxBatchItems items; each item as
// ValidateSubmission.
absl::StatusOr<std::vector<SubmissionItem>> ValidateSubmissions(
    const portcullis::verifier::v1::SubmitMentionsRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);

// What SubmitMention answers for the writer's `result`: the response, written into `response`,
// or the error (mapped by StoreStatus).
absl::Status WriteSubmitResult(absl::StatusOr<store::SubmitResult> result, const RpcCall& call,
                               absl::string_view item_request_id,
                               portcullis::verifier::v1::SubmitMentionResponse* response);

// The rejection that answers a mention whose target the store found not served; nullopt for
// kServed.
std::optional<intake::Rejection> UnservedTarget(store::TargetMatch match);

// GetMention: mention_id must be a UUID (INVALID_ARGUMENT).
absl::Status ValidateMentionId(const portcullis::verifier::v1::GetMentionRequest& request);

// The stored type name ("reply") of a MentionType; empty for UNSPECIFIED or unknown values.
std::string TypeName(portcullis::verifier::v1::MentionType type);
// The MentionType of a stored type name; UNSPECIFIED for "" or unknown names.
portcullis::verifier::v1::MentionType TypeOf(absl::string_view name);

// Every field of `mention` into `out` (author only when the mention has one).
void ToProto(const store::StoredMention& mention, portcullis::verifier::v1::Mention* out);

// Moderation (issue 16): the stored review state ("APPROVED") of a ReviewState and back;
// empty / UNSPECIFIED for unknown values.
std::string ReviewStateName(portcullis::verifier::v1::ReviewState state);
portcullis::verifier::v1::ReviewState ReviewStateOf(absl::string_view name);

// What a caller who may not review (auth::Caller::MayReview) reads of one mention: a VERIFIED
// mention the public does not see (store::StoredMention::shown) keeps its state and review
// state, without its content and author.
void WithoutUnshownContent(store::StoredMention& mention);

}  // namespace portcullis::verifier::server
