#pragma once

#include <string>
#include <variant>

#include "absl/strings/string_view.h"
#include "portcullis/verifier/v1/verifier.pb.h"

// Validation of SubmitMention requests: the rules written in verifier.proto,
// enforced before anything reaches the database. All URL rules live in this one file; a full
// WHATWG URL parser (common/url) will replace the hand-written checks here.
namespace portcullis::verifier::intake {

// Machine-readable rejection codes (SubmitMentionResponse.reason).
inline constexpr absl::string_view kInvalidSource = "invalid_source";
inline constexpr absl::string_view kInvalidTarget = "invalid_target";
inline constexpr absl::string_view kUnsupportedScheme = "unsupported_scheme";
inline constexpr absl::string_view kCredentialsInUrl = "credentials_in_url";
inline constexpr absl::string_view kUrlTooLong = "url_too_long";
inline constexpr absl::string_view kSameSourceAndTarget = "same_source_and_target";

// Longest URL accepted, in bytes.
inline constexpr size_t kMaxUrlBytes = 2048;

// A submission that cannot be accepted.
struct Rejection {
  std::string reason;       // One of the codes above.
  std::string description;  // Human-readable, safe to show to the sender.
};

// A submission that can be accepted, with both URLs normalized for the de-duplication key:
// lowercase scheme and host, default port dropped, fragment dropped, empty path written "/".
struct NormalizedMention {
  std::string source;
  std::string target;
};

using SubmitMentionValidation = std::variant<Rejection, NormalizedMention>;

// Applies the SubmitMentionRequest rules: each URL non-empty, at most kMaxUrlBytes, no ASCII
// whitespace or control characters, scheme http or https (any case), a "//" authority with a
// non-empty host, no userinfo, a numeric port up to 65535; source and target must differ after
// normalization. The source is checked before the target.
SubmitMentionValidation Validate(const portcullis::verifier::v1::SubmitMentionRequest& request);

}  // namespace portcullis::verifier::intake
