#pragma once

#include <array>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace portcullis::status {

// One row of the mapping table: how one absl status code travels over gRPC and how the gateway
// answers an HTTP client with it.
struct StatusMapping {
  absl::StatusCode absl_code;
  grpc::StatusCode grpc_code;
  int http_status;
  // The `error` field of an HTTP error body for this code.
  absl::string_view http_error;
  // True when the failure is temporary: the HTTP answer carries Retry-After.
  bool retryable;
};

// The one table. A sender must read our answer correctly: 4xx means "do not retry this request
// as it is", 503 + Retry-After means "try again later". Everything the caller cannot fix and that
// is not temporary is a 500, and carries no detail. constexpr: the gateway builds its answers to
// failed verifier calls from it (ingest-gateway/src/answers.cc).
inline constexpr std::array<StatusMapping, 17> kStatusMappings = {{
    {absl::StatusCode::kOk, grpc::StatusCode::OK, 200, "", false},
    {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED, 503, "unavailable", true},
    {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN, 500, "internal_error", false},
    {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT, 400, "invalid_request",
     false},
    {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED, 503, "unavailable",
     true},
    {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND, 404, "not_found", false},
    {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS, 409, "already_exists",
     false},
    {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED, 403, "forbidden",
     false},
    {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED, 429,
     "rate_limited", true},
    {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION, 400,
     "invalid_request", false},
    {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED, 503, "unavailable", true},
    {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE, 400, "invalid_request", false},
    {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED, 501, "not_implemented",
     false},
    {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL, 500, "internal_error", false},
    {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE, 503, "unavailable", true},
    {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS, 500, "internal_error", false},
    {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED, 401, "unauthenticated",
     false},
}};

// The row for `code`. Every absl code has a row; unknown codes map like kUnknown.
constexpr const StatusMapping& MappingFor(absl::StatusCode code) {
  for (const StatusMapping& row : kStatusMappings) {
    if (row.absl_code == code) {
      return row;
    }
  }
  return MappingFor(absl::StatusCode::kUnknown);
}

// absl -> gRPC. The message travels unchanged.
grpc::Status ToGrpcStatus(const absl::Status& status);

// gRPC -> absl. The message travels unchanged.
absl::Status FromGrpcStatus(const grpc::Status& status);

// The HTTP status the gateway answers with for `code`.
int HttpStatusFor(absl::StatusCode code);

}  // namespace portcullis::status
