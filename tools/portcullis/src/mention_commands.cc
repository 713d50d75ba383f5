#include "tools/portcullis/src/mention_commands.h"

#include <chrono>

#include "absl/time/clock.h"
#include "common/status/status_mapping.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/client_context.h"
#include "tools/portcullis/src/cli.h"

namespace portcullis::cli {
namespace {

using verifier::v1::Decision;

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

int PrintJson(const google::protobuf::Message& message, std::ostream& out, std::ostream& err) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
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
  err << "error: " << status::FromGrpcStatus(status).ToString() << "\n";
  return kExitFailed;
}

}  // namespace

int SubmitMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& source, const std::string& target, std::ostream& out,
                  std::ostream& err) {
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  verifier::v1::SubmitMentionRequest request;
  request.set_source(source);
  request.set_target(target);
  verifier::v1::SubmitMentionResponse response;
  if (const grpc::Status status = stub.SubmitMention(&context, request, &response); !status.ok()) {
    return ReportRpcError(status, err);
  }
  if (const int code = PrintJson(response, out, err); code != kExitOk) {
    return code;
  }
  return response.decision() == Decision::DECISION_ACCEPTED ? kExitOk : kExitFailed;
}

int GetMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
               const std::string& mention_id, std::ostream& out, std::ostream& err) {
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  verifier::v1::GetMentionRequest request;
  request.set_mention_id(mention_id);
  verifier::v1::GetMentionResponse response;
  if (const grpc::Status status = stub.GetMention(&context, request, &response); !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response.mention(), out, err);
}

}  // namespace portcullis::cli
