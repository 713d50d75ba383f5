#pragma once

#include <string>
#include <variant>

#include "absl/strings/string_view.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"

// Validation of SubmitMention requests: the rules written in verifier.proto,
// enforced before anything reaches the database. URLs are read with the WHATWG parser
// (common/url), exactly as a browser reads them.
namespace portcullis::verifier::intake {

// Machine-readable rejection codes (SubmitMentionResponse.reason).
inline constexpr absl::string_view kInvalidSource = "invalid_source";
inline constexpr absl::string_view kInvalidTarget = "invalid_target";
inline constexpr absl::string_view kUnsupportedScheme = "unsupported_scheme";
inline constexpr absl::string_view kCredentialsInUrl = "credentials_in_url";
inline constexpr absl::string_view kUrlTooLong = "url_too_long";
inline constexpr absl::string_view kSameSourceAndTarget = "same_source_and_target";
// Decided against the database (sites and targets), after Validate.
inline constexpr absl::string_view kTargetNotSupported = "target_not_supported";
inline constexpr absl::string_view kTargetNotFound = "target_not_found";

// Longest URL accepted, in bytes.
inline constexpr size_t kMaxUrlBytes = 2048;

// A submission that cannot be accepted.
struct Rejection {
  std::string reason;       // One of the codes above.
  std::string description;  // Human-readable, safe to show to the sender.
};

// A submission that can be accepted, with its de-duplication key (url::Normalize: WHATWG
// serialization, fragment and tracking parameters dropped).
struct NormalizedMention {
  url::MentionKey key;
  // The target's serialized host: the site it must be on.
  std::string target_domain;
};

using SubmitMentionValidation = std::variant<Rejection, NormalizedMention>;

// Applies the SubmitMentionRequest rules: each URL non-empty, at most kMaxUrlBytes, no ASCII
// whitespace or control characters (which a browser would silently strip: we refuse rather than
// guess), an absolute URL that the WHATWG parser accepts, scheme http or https, no username or
// password; source and target must differ after normalization. The source is checked first.
SubmitMentionValidation Validate(const portcullis::verifier::v1::SubmitMentionRequest& request,
                                 const url::TrackingParameters& tracking);

}  // namespace portcullis::verifier::intake
