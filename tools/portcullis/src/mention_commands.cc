#include "tools/portcullis/src/mention_commands.h"

#include <algorithm>

#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

using verifier::v1::Decision;

}  // namespace

int SubmitMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& source, const std::string& target, std::ostream& out,
                  std::ostream& err) {
  verifier::v1::SubmitMentionRequest request;
  request.set_source(source);
  request.set_target(target);
  verifier::v1::SubmitMentionResponse response;
  if (const grpc::Status status = CallWithDeadline(
          stub, &verifier::v1::Verifier::StubInterface::SubmitMention, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  if (const int code = PrintJson(response, out, err); code != kExitOk) {
    return code;
  }
  return response.decision() == Decision::DECISION_ACCEPTED ? kExitOk : kExitFailed;
}

int GetMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
               const std::string& mention_id, std::ostream& out, std::ostream& err) {
  verifier::v1::GetMentionRequest request;
  request.set_mention_id(mention_id);
  verifier::v1::GetMentionResponse response;
  if (const grpc::Status status = CallWithDeadline(
          stub, &verifier::v1::Verifier::StubInterface::GetMention, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response.mention(), out, err);
}

int VerifyMention(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                  const std::string& source, const std::string& target, std::ostream& out,
                  std::ostream& err) {
  verifier::v1::VerifyNowRequest request;
  request.set_source(source);
  request.set_target(target);
  verifier::v1::VerifyNowResponse response;
  if (const grpc::Status status =
          CallWithDeadline(stub, &verifier::v1::Verifier::StubInterface::VerifyNow,
                           std::max(timeout, kVerifyNowMinTimeout), request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  if (const int code = PrintJson(response, out, err); code != kExitOk) {
    return code;
  }
  return response.decision() == Decision::DECISION_ACCEPTED &&
                 response.mention().state() == verifier::v1::MENTION_STATE_VERIFIED
             ? kExitOk
             : kExitFailed;
}

}  // namespace portcullis::cli
