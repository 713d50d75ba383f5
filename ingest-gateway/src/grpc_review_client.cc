#include "ingest-gateway/src/grpc_review_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc/request_id.h"
#include "grpcpp/client_context.h"
#include "common/status/status_mapping.h"

namespace portcullis::gateway {
namespace {

// One review call's state, alive from its start until its callback has run.
template <typename Request, typename Response, typename Callback>
struct ReviewCall {
  grpc::ClientContext context;
  Request request;
  Response response;
  Callback callback;
};

}  // namespace

GrpcReviewClient::GrpcReviewClient(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout)
    : channel_(std::move(channel)),
      stub_(verifier::v1::Verifier::NewStub(channel_)),
      timeout_(timeout) {}

GrpcReviewClient::~GrpcReviewClient() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

template <typename Response, typename Request, typename Callback, typename Start>
void GrpcReviewClient::InvokeAsReviewer(absl::string_view request_id, const std::string& token,
                                        const Request& request, Callback callback, Start start) {
  using CallState = ReviewCall<Request, Response, Callback>;
  auto* call = new CallState();
  call->request = request;
  call->callback = std::move(callback);
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  call->context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  if (!request_id.empty()) {
    call->context.AddMetadata(grpc_metadata::kRequestIdMetadata, std::string(request_id));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  start(&call->context, &call->request, &call->response, [this, call](grpc::Status grpc_status) {
    std::unique_ptr<CallState> owned(call);
    // UNAUTHENTICATED stays what it is: the reviewer's token, not the gateway's, was refused.
    absl::Status result = status::FromGrpcStatus(grpc_status);
    if (result.ok()) {
      owned->callback(std::move(owned->response));
    } else {
      owned->callback(std::move(result));
    }
    owned.reset();
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    idle_.notify_all();
  });
}

void GrpcReviewClient::ListReviewQueue(absl::string_view request_id, const std::string& token,
                                       const verifier::v1::ListReviewQueueRequest& request,
                                       QueueCallback callback) {
  InvokeAsReviewer<verifier::v1::ListReviewQueueResponse>(
      request_id, token, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->ListReviewQueue(context, req, resp, std::move(done));
      });
}

void GrpcReviewClient::ReviewMention(absl::string_view request_id, const std::string& token,
                                     const verifier::v1::ReviewMentionRequest& request,
                                     ReviewCallback callback) {
  InvokeAsReviewer<verifier::v1::ReviewMentionResponse>(
      request_id, token, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->ReviewMention(context, req, resp, std::move(done));
      });
}

}  // namespace portcullis::gateway
