#pragma once

#include "absl/status/status.h"

namespace portcullis::verifier::server {

// A store error as the admin and ingest RPCs answer it: NOT_FOUND, INVALID_ARGUMENT,
// PERMISSION_DENIED (a site outside the token's binding), UNAVAILABLE and DEADLINE_EXCEEDED pass
// (the last two are retryable already); anything else is a database error the caller may retry,
// answered UNAVAILABLE without its details (never a bare INTERNAL, never SQL).
inline absl::Status Retryable(absl::Status status) {
  if (status.ok() || absl::IsNotFound(status) || absl::IsInvalidArgument(status) ||
      absl::IsPermissionDenied(status) || absl::IsDeadlineExceeded(status) ||
      absl::IsUnavailable(status)) {
    return status;
  }
  return absl::UnavailableError("database unavailable, retry later");
}

}  // namespace portcullis::verifier::server
