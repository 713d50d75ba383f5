#include "ingest-gateway/src/grpc_verifier_client.h"

#include <utility>

#include "common/status/status_mapping.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

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

std::shared_ptr<grpc::Channel> MakeVerifierChannel(absl::string_view target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, kInitialReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinReconnectBackoffMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  args.SetServiceConfigJSON(kServiceConfig);
  return grpc::CreateCustomChannel(std::string(target), grpc::InsecureChannelCredentials(), args);
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
void GrpcVerifierClient::Invoke(const Request& request, Callback callback, Start start) {
  using CallState = Call<Request, Response, Callback>;
  auto* call = new CallState();
  call->request = request;
  call->callback = std::move(callback);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  CallStarted();
  start(&call->context, &call->request, &call->response, [this, call](grpc::Status grpc_status) {
    std::unique_ptr<CallState> owned(call);
    absl::Status result = status::FromGrpcStatus(grpc_status);
    if (result.ok()) {
      owned->callback(std::move(owned->response));
    } else {
      owned->callback(std::move(result));
    }
    owned.reset();
    CallFinished();
  });
}

void GrpcVerifierClient::SubmitMention(const verifier::v1::SubmitMentionRequest& request,
                                       SubmitCallback callback) {
  Invoke<verifier::v1::SubmitMentionResponse>(
      request, std::move(callback), [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->SubmitMention(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::GetMention(const verifier::v1::GetMentionRequest& request,
                                    GetCallback callback) {
  Invoke<verifier::v1::GetMentionResponse>(
      request, std::move(callback), [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->GetMention(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::EvaluateIngest(const verifier::v1::EvaluateIngestRequest& request,
                                        EvaluateIngestCallback callback) {
  Invoke<verifier::v1::EvaluateIngestResponse>(
      request, std::move(callback), [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->EvaluateIngest(context, req, resp, std::move(done));
      });
}

void GrpcVerifierClient::ListMentions(const verifier::v1::ListMentionsRequest& request,
                                      ListMentionsCallback callback) {
  Invoke<verifier::v1::ListMentionsResponse>(
      request, std::move(callback), [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->ListMentions(context, req, resp, std::move(done));
      });
}

}  // namespace portcullis::gateway
