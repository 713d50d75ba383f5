#include "ingest-gateway/src/grpc_verifier_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc/authorized_channel.h"
#include "common/grpc/request_id.h"
#include "common/logging/log.h"
#include "common/status/status_mapping.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "ingest-gateway/src/answers.h"

namespace portcullis::gateway {
namespace {

constexpr int kInitialReconnectBackoffMs = 100;
constexpr int kMinReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;
constexpr char kServiceConfig[] = R"({"loadBalancingConfig":[{"round_robin":{}}]})";

// One call's state, alive from the start of the call until its callback has run.
template <typename Request, typename Response, typename Callback>
struct Call {
  grpc::ClientContext context;
  Request request;
  Response response;
  Callback callback;
};

}  // namespace

std::shared_ptr<grpc::Channel> MakeVerifierChannel(absl::string_view target, std::string token,
                                                   const grpc_tls::ChannelSecurity& security) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kInitialReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  args.SetServiceConfigJSON(kServiceConfig);
  security.ApplyTo(args);
  return grpc_client::CreateAuthorizedChannel(std::string(target), security.credentials,
                                              std::move(args), std::move(token));
}

AuthorizedHealthChecker::AuthorizedHealthChecker(std::shared_ptr<grpc::Channel> channel)
    : health_(channel), stub_(verifier::v1::Verifier::NewStub(channel)) {}

absl::Status AuthorizedHealthChecker::Check(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  if (absl::Status serving = health_.Check(timeout); !serving.ok()) {
    return serving;
  }
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(deadline));
  context.set_wait_for_ready(true);
  verifier::v1::GetMentionRequest request;  // Empty id: refused after authentication.
  verifier::v1::GetMentionResponse response;
  const grpc::Status probe = stub_->GetMention(&context, request, &response);
  switch (probe.error_code()) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
      return absl::OkStatus();
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return absl::UnauthenticatedError(
          absl::StrCat("the verifier refused the gateway's token (",
                       probe.error_code() == grpc::StatusCode::UNAUTHENTICATED
                           ? "UNAUTHENTICATED: check --verifier_token_file"
                           : "PERMISSION_DENIED: the token needs the scopes submit,read",
                       ")"));
    default:
      return status::FromGrpcStatus(probe);
  }
}

GrpcVerifierClient::GrpcVerifierClient(std::shared_ptr<grpc::Channel> channel,
                                       absl::Duration timeout)
    : channel_(std::move(channel)),
      stub_(verifier::v1::Verifier::NewStub(channel_)),
      timeout_(timeout) {}

GrpcVerifierClient::~GrpcVerifierClient() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

void GrpcVerifierClient::CallStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++in_flight_;
}

void GrpcVerifierClient::CallFinished() {
  std::lock_guard<std::mutex> lock(mu_);
  --in_flight_;
  idle_.notify_all();
}

template <typename Response, typename Request, typename Callback, typename Start>
void GrpcVerifierClient::Invoke(absl::string_view request_id, const Request& request,
                                Callback callback, Start start) {
  using CallState = Call<Request, Response, Callback>;
  auto* call = new CallState();
  call->request = request;
  call->callback = std::move(callback);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  if (!request_id.empty()) {
    call->context.AddMetadata(grpc_metadata::kRequestIdMetadata, std::string(request_id));
  }
  CallStarted();
  start(&call->context, &call->request, &call->response, [this, call](grpc::Status grpc_status) {
    std::unique_ptr<CallState> owned(call);
    absl::Status result = FromVerifierStatus(grpc_status);
    if (result.ok()) {
      owned->callback(std::move(owned->response));
    } else {
      owned->callback(std::move(result));
    }
    owned.reset();
    CallFinished();
  });
}

void GrpcVerifierClient::SubmitMention(absl::string_view request_id,
                                       const verifier::v1::SubmitMentionRequest& request,
                                       SubmitCallback callback) {
  Invoke<verifier::v1::SubmitMentionResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->SubmitMention(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::GetMention(absl::string_view request_id,
                                    const verifier::v1::GetMentionRequest& request,
                                    GetCallback callback) {
  Invoke<verifier::v1::GetMentionResponse>(request_id, request, std::move(callback),
                                           [this](auto* context, auto* req, auto* resp, auto done) {
                                             stub_->async()->GetMention(context, req, resp,
                                                                        std::move(done));
                                           });
}

void GrpcVerifierClient::EvaluateIngest(absl::string_view request_id,
                                        const verifier::v1::EvaluateIngestRequest& request,
                                        EvaluateIngestCallback callback) {
  Invoke<verifier::v1::EvaluateIngestResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->EvaluateIngest(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::ListMentions(absl::string_view request_id,
                                      const verifier::v1::ListMentionsRequest& request,
                                      ListMentionsCallback callback) {
  Invoke<verifier::v1::ListMentionsResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->ListMentions(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::ListPublicMentions(absl::string_view request_id,
                                   const verifier::v1::ListPublicMentionsRequest& request,
                                   ListPublicMentionsCallback callback) {
  Invoke<verifier::v1::ListPublicMentionsResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->ListPublicMentions(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::CountPublicMentions(absl::string_view request_id,
                                   const verifier::v1::CountPublicMentionsRequest& request,
                                   CountPublicMentionsCallback callback) {
  Invoke<verifier::v1::CountPublicMentionsResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->CountPublicMentions(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::ListMentionChanges(absl::string_view request_id,
                                   const verifier::v1::ListMentionChangesRequest& request,
                                   ListMentionChangesCallback callback) {
  Invoke<verifier::v1::ListMentionChangesResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->ListMentionChanges(context, req, resp, std::move(done));
      });
}

}  // namespace portcullis::gateway
