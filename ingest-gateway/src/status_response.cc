#include "ingest-gateway/src/status_response.h"

#include "absl/strings/str_cat.h"
#include "common/status/status_mapping.h"

namespace portcullis::gateway {

absl::string_view DescriptionForError(absl::string_view error) {
  if (error == "unavailable") {
    return "The service is temporarily unavailable; retry later.";
  }
  if (error == "rate_limited") {
    return "Too many requests; retry later.";
  }
  if (error == "invalid_request") {
    return "The request is invalid.";
  }
  if (error == "not_found") {
    return "Nothing was found for this request.";
  }
  if (error == "already_exists") {
    return "This already exists.";
  }
  if (error == "forbidden") {
    return "This request is not allowed.";
  }
  if (error == "unauthenticated") {
    return "Authentication is required.";
  }
  if (error == "not_implemented") {
    return "This is not supported.";
  }
  return "The request could not be processed.";
}

http::HttpResponse ResponseForStatus(const absl::Status& status, int retry_after_seconds) {
  const status::StatusMapping& mapping =
      status::MappingFor(status.ok() ? absl::StatusCode::kInternal : status.code());
  http::HttpResponse response = http::JsonError(mapping.http_status, mapping.http_error,
                                                DescriptionForError(mapping.http_error));
  if (mapping.retryable) {
    response.headers.Set("Retry-After", absl::StrCat(retry_after_seconds));
  }
  return response;
}

}  // namespace portcullis::gateway
