#include "common/status/status_mapping.h"

namespace portcullis::status {

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
  for (const StatusMapping& row : kStatusMappings) {
    if (row.grpc_code == status.error_code()) {
      return absl::Status(row.absl_code, status.error_message());
    }
  }
  return absl::UnknownError(status.error_message());
}

int HttpStatusFor(absl::StatusCode code) { return MappingFor(code).http_status; }

}  // namespace portcullis::status
