#include "common/status/status_mapping.h"

#include <array>

namespace portcullis::status {
namespace {

using absl::StatusCode;
using GrpcCode = grpc::StatusCode;

// The one table. A sender must read our answer correctly: 4xx means "do not retry this request
// as it is", 503 + Retry-After means "try again later". Everything the caller cannot fix and that
// is not temporary is a 500, and carries no detail.
constexpr std::array<StatusMapping, 17> kTable = {{
    {StatusCode::kOk, GrpcCode::OK, 200, "", false},
    {StatusCode::kCancelled, GrpcCode::CANCELLED, 503, "unavailable", true},
    {StatusCode::kUnknown, GrpcCode::UNKNOWN, 500, "internal_error", false},
    {StatusCode::kInvalidArgument, GrpcCode::INVALID_ARGUMENT, 400, "invalid_request", false},
    {StatusCode::kDeadlineExceeded, GrpcCode::DEADLINE_EXCEEDED, 503, "unavailable", true},
    {StatusCode::kNotFound, GrpcCode::NOT_FOUND, 404, "not_found", false},
    {StatusCode::kAlreadyExists, GrpcCode::ALREADY_EXISTS, 409, "already_exists", false},
    {StatusCode::kPermissionDenied, GrpcCode::PERMISSION_DENIED, 403, "forbidden", false},
    {StatusCode::kResourceExhausted, GrpcCode::RESOURCE_EXHAUSTED, 429, "rate_limited", true},
    {StatusCode::kFailedPrecondition, GrpcCode::FAILED_PRECONDITION, 400, "invalid_request",
     false},
    {StatusCode::kAborted, GrpcCode::ABORTED, 503, "unavailable", true},
    {StatusCode::kOutOfRange, GrpcCode::OUT_OF_RANGE, 400, "invalid_request", false},
    {StatusCode::kUnimplemented, GrpcCode::UNIMPLEMENTED, 501, "not_implemented", false},
    {StatusCode::kInternal, GrpcCode::INTERNAL, 500, "internal_error", false},
    {StatusCode::kUnavailable, GrpcCode::UNAVAILABLE, 503, "unavailable", true},
    {StatusCode::kDataLoss, GrpcCode::DATA_LOSS, 500, "internal_error", false},
    {StatusCode::kUnauthenticated, GrpcCode::UNAUTHENTICATED, 401, "unauthenticated", false},
}};

}  // namespace

const StatusMapping& MappingFor(absl::StatusCode code) {
  for (const StatusMapping& row : kTable) {
    if (row.absl_code == code) {
      return row;
    }
  }
  return MappingFor(StatusCode::kUnknown);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) {
    return grpc::Status::OK;
  }
  return grpc::Status(MappingFor(status.code()).grpc_code, std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) {
    return absl::OkStatus();
  }
  for (const StatusMapping& row : kTable) {
    if (row.grpc_code == status.error_code()) {
      return absl::Status(row.absl_code, status.error_message());
    }
  }
  return absl::UnknownError(status.error_message());
}

int HttpStatusFor(absl::StatusCode code) { return MappingFor(code).http_status; }

}  // namespace portcullis::status
