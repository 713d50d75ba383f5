#include "tools/portcullis/src/rpc_output.h"

#include <string>

#include "common/status/status_mapping.h"
#include "google/protobuf/util/json_util.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {

int PrintJson(const google::protobuf::Message& message, std::ostream& out, std::ostream& err) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  if (const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
      !status.ok()) {
    err << "error: cannot print the answer as JSON: " << status.ToString() << "\n";
    return kExitFailed;
  }
  out << json;
  return kExitOk;
}

int ReportRpcError(const grpc::Status& status, std::ostream& err) {
  err << "error: " << status::FromGrpcStatus(status).ToString();
  if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    err << " (the verifier refused the API token from --token_file, PORTCULLIS_TOKEN or "
           "PORTCULLIS_TOKEN_FILE)";
  }
  err << "\n";
  return kExitFailed;
}

}  // namespace portcullis::cli
