#include "tools/portcullis/src/mention_commands.h"

#include <optional>

#include "absl/strings/ascii.h"

#include <algorithm>

#include "tools/portcullis/src/cli.h"
#include "tools/portcullis/src/rpc_output.h"

namespace portcullis::cli {
namespace {

using verifier::v1::Decision;

std::optional<verifier::v1::MentionState> ParseState(const std::string& text) {
  const std::string upper = "MENTION_STATE_" + absl::AsciiStrToUpper(text);
  verifier::v1::MentionState state;
  if (!verifier::v1::MentionState_Parse(upper, &state) ||
      state == verifier::v1::MENTION_STATE_UNSPECIFIED) {
    return std::nullopt;
  }
  return state;
}

std::optional<verifier::v1::MentionType> ParseType(const std::string& text) {
  const std::string upper = "MENTION_TYPE_" + absl::AsciiStrToUpper(text);
  verifier::v1::MentionType type;
  if (!verifier::v1::MentionType_Parse(upper, &type) ||
      type == verifier::v1::MENTION_TYPE_UNSPECIFIED) {
    return std::nullopt;
  }
  return type;
}

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

int ListMentions(verifier::v1::Verifier::StubInterface& stub, absl::Duration timeout,
                 const MentionListOptions& options, std::ostream& out, std::ostream& err) {
  const auto usage = [&err](const std::string& why) {
    err << "error: " << why << "\n";
    return kExitUsage;
  };
  if (options.target.empty() == options.site.empty()) {
    return usage("mention list needs exactly one of --target URL and --site DOMAIN");
  }
  verifier::v1::ListMentionsRequest request;
  request.set_target(options.target);
  request.set_domain(options.site);
  if (!options.state.empty()) {
    const std::optional<verifier::v1::MentionState> state = ParseState(options.state);
    if (!state) {
      return usage("--state must be pending, verified or failed");
    }
    request.set_state(*state);
  }
  if (!options.type.empty()) {
    const std::optional<verifier::v1::MentionType> type = ParseType(options.type);
    if (!type) {
      return usage("--type must be mention, reply, like, repost, bookmark or rsvp");
    }
    request.set_type(*type);
  }
  if (options.page_size < 0 || options.page_size > 1000) {
    return usage("--page-size must be from 1 to 1000 (0: the server's default)");
  }
  request.set_page_size(options.page_size);
  request.set_page_token(options.page_token);
  verifier::v1::ListMentionsResponse response;
  if (const grpc::Status status = CallWithDeadline(
          stub, &verifier::v1::Verifier::StubInterface::ListMentions, timeout, request, &response);
      !status.ok()) {
    return ReportRpcError(status, err);
  }
  return PrintJson(response, out, err);
}

}  // namespace portcullis::cli
