#pragma once

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
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

// The row for `code`. Every absl code has a row; unknown codes map like kUnknown.
const StatusMapping& MappingFor(absl::StatusCode code);

// absl -> gRPC. The message travels unchanged.
grpc::Status ToGrpcStatus(const absl::Status& status);

// gRPC -> absl. The message travels unchanged.
absl::Status FromGrpcStatus(const grpc::Status& status);

// The HTTP status the gateway answers with for `code`.
int HttpStatusFor(absl::StatusCode code);

}  // namespace portcullis::status
