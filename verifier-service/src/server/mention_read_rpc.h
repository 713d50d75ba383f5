#pragma once

// The pure half of the mention read RPCs (GetMention, ListMentions): request validation and the
// mapping of stored mentions to the proto. No I/O; VerifierService runs the store calls.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"
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

// The stored type name ("reply") of a MentionType; empty for UNSPECIFIED or unknown values.
std::string TypeName(portcullis::verifier::v1::MentionType type);
// The MentionType of a stored type name; UNSPECIFIED for "" or unknown names.
portcullis::verifier::v1::MentionType TypeOf(absl::string_view name);

// Every field of `mention` into `out` (author only when the mention has one).
void ToProto(const store::StoredMention& mention, portcullis::verifier::v1::Mention* out);

}  // namespace portcullis::verifier::server
