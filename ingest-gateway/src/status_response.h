#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ingest-gateway/src/http/http_message.h"

namespace portcullis::gateway {

// The HTTP answer for a failed call to the verifier, through the one mapping table in
// common/status. The status message is never put in the body (it may name internal addresses):
// `error_description` is a fixed sentence per error code. Retryable codes carry
// `Retry-After: <retry_after_seconds>`.
http::HttpResponse ResponseForStatus(const absl::Status& status, int retry_after_seconds);

// The fixed sentence shown for an `error` code of the mapping table.
absl::string_view DescriptionForError(absl::string_view error);

}  // namespace portcullis::gateway
