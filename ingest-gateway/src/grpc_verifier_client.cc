#include "ingest-gateway/src/grpc_verifier_client.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

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

// After a failed connection attempt the next comes soon (100 ms, growing to 1 s).
constexpr int kInitialReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;
// How long one connection attempt (TCP, TLS, HTTP/2 SETTINGS) may take: gRPC reads it from
// GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, whatever the name says. At 100 ms a busy verifier's TLS
// handshake timed out attempt after attempt while the gateway answered 503; 2 s is the calls'
// default deadline (--verifier_timeout), which bounds how long a call waits for it anyway.
constexpr int kMinConnectTimeoutMs = 2000;
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
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinConnectTimeoutMs);
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
                                       absl::Duration timeout, CallCoalescerOptions coalescing)
    : channel_(std::move(channel)),
      stub_(verifier::v1::Verifier::NewStub(channel_)),
      timeout_(timeout),
      submissions_(
          coalescing,
          [this](const std::vector<SubmitCoalescer::Item>& items, absl::Time deadline,
                 SubmitCoalescer::CallDone done) {
            SendSubmitMentions(items, deadline, std::move(done));
          },
          [](const verifier::v1::SubmitMentionRequest& request) { return request.ByteSizeLong(); }),
      deliveries_(
          coalescing,
          [this](const std::vector<IngestCoalescer::Item>& items, absl::Time deadline,
                 IngestCoalescer::CallDone done) {
            SendEvaluateIngestBatch(items, deadline, std::move(done));
          },
          [](const verifier::v1::EvaluateIngestRequest& request) {
            return request.ByteSizeLong();
          }) {}

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
  submissions_.Add(std::string(request_id), request, absl::Now() + timeout_, std::move(callback));
}

namespace {

// One batch call's state, alive from its start until its results are handed on.
template <typename Request, typename Response, typename Done>
struct BatchCall {
  grpc::ClientContext context;
  Request request;
  Response response;
  Done done;  // The coalescer's; gRPC's callback must be copyable, so it is kept here.
};

// A batch item's answer, from its ItemStatus and response.
template <typename Response>
absl::StatusOr<Response> ItemAnswer(const verifier::v1::ItemStatus& status, Response response) {
  const absl::Status item = FromVerifierStatus(
      grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message()));
  if (!item.ok()) {
    return item;
  }
  return response;
}

}  // namespace

template <typename Coalescer, typename Single>
void GrpcVerifierClient::SendOneByOne(const std::vector<typename Coalescer::Item>& items,
                                      typename Coalescer::CallDone done, Single single) {
  using Answer = typename Coalescer::Results::value_type::value_type;
  struct Gather {
    std::mutex mu;
    std::vector<std::optional<Answer>> results;
    size_t pending;
    typename Coalescer::CallDone done;
  };
  // `items` belongs to the coalescer, which frees it once `done` has run: the last answer may
  // come (on another thread) before this loop is over, so the loop walks a copy of its own.
  const std::vector<typename Coalescer::Item> own_items = items;
  auto gather = std::make_shared<Gather>();
  gather->results.resize(own_items.size());
  gather->pending = own_items.size();
  gather->done = std::move(done);
  for (size_t i = 0; i < own_items.size(); ++i) {
    single(own_items[i], [gather, i](Answer result) {
      std::unique_lock<std::mutex> lock(gather->mu);
      gather->results[i].emplace(std::move(result));
      if (--gather->pending > 0) {
        return;
      }
      lock.unlock();
      std::vector<Answer> all;
      all.reserve(gather->results.size());
      for (auto& one : gather->results) {
        all.push_back(*std::move(one));
      }
      std::move(gather->done)(std::move(all));
    });
  }
}

void GrpcVerifierClient::SendSubmitMentions(const std::vector<SubmitCoalescer::Item>& items,
                                            absl::Time deadline, SubmitCoalescer::CallDone done) {
  using Call = BatchCall<verifier::v1::SubmitMentionsRequest, verifier::v1::SubmitMentionsResponse,
                         SubmitCoalescer::CallDone>;
  auto* call = new Call();
  call->done = std::move(done);
  for (const SubmitCoalescer::Item& item : items) {
    verifier::v1::SubmitMentionsItem* added = call->request.add_items();
    added->set_request_id(item.request_id);
    *added->mutable_mention() = item.request;
  }
  call->context.set_deadline(absl::ToChronoTime(deadline));
  if (!items.front().request_id.empty()) {
    call->context.AddMetadata(grpc_metadata::kRequestIdMetadata, items.front().request_id);
  }
  CallStarted();
  stub_->async()->SubmitMentions(
      &call->context, &call->request, &call->response,
      [this, call, &items](grpc::Status grpc_status) {
        std::unique_ptr<Call> owned(call);
        auto done = std::move(owned->done);
        if (grpc_status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
          SendOneByOne<SubmitCoalescer>(
              items, std::move(done), [this](const SubmitCoalescer::Item& item, auto answer) {
                Invoke<verifier::v1::SubmitMentionResponse>(
                    item.request_id, item.request, SubmitCallback(std::move(answer)),
                    [this](auto* context, auto* req, auto* resp, auto on_done) {
                      stub_->async()->SubmitMention(context, req, resp, std::move(on_done));
                    });
              });
        } else if (absl::Status status = FromVerifierStatus(grpc_status); !status.ok()) {
          std::move(done)(status);
        } else {
          std::vector<absl::StatusOr<verifier::v1::SubmitMentionResponse>> results;
          results.reserve(owned->response.results_size());
          for (verifier::v1::SubmitMentionsResult& result :
               *owned->response.mutable_results()) {
            results.push_back(ItemAnswer(result.status(), std::move(*result.mutable_mention())));
          }
          std::move(done)(std::move(results));
        }
        owned.reset();
        CallFinished();
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
  deliveries_.Add(std::string(request_id), request, absl::Now() + timeout_, std::move(callback));
}

void GrpcVerifierClient::SendEvaluateIngestBatch(const std::vector<IngestCoalescer::Item>& items,
                                                 absl::Time deadline,
                                                 IngestCoalescer::CallDone done) {
  using Call =
      BatchCall<verifier::v1::EvaluateIngestBatchRequest, verifier::v1::EvaluateIngestBatchResponse,
                IngestCoalescer::CallDone>;
  auto* call = new Call();
  call->done = std::move(done);
  for (const IngestCoalescer::Item& item : items) {
    verifier::v1::EvaluateIngestBatchItem* added = call->request.add_items();
    added->set_request_id(item.request_id);
    *added->mutable_item() = item.request;
  }
  call->context.set_deadline(absl::ToChronoTime(deadline));
  if (!items.front().request_id.empty()) {
    call->context.AddMetadata(grpc_metadata::kRequestIdMetadata, items.front().request_id);
  }
  CallStarted();
  stub_->async()->EvaluateIngestBatch(
      &call->context, &call->request, &call->response,
      [this, call, &items](grpc::Status grpc_status) {
        std::unique_ptr<Call> owned(call);
        auto done = std::move(owned->done);
        if (grpc_status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
          SendOneByOne<IngestCoalescer>(
              items, std::move(done), [this](const IngestCoalescer::Item& item, auto answer) {
                Invoke<verifier::v1::EvaluateIngestResponse>(
                    item.request_id, item.request, EvaluateIngestCallback(std::move(answer)),
                    [this](auto* context, auto* req, auto* resp, auto on_done) {
                      stub_->async()->EvaluateIngest(context, req, resp, std::move(on_done));
                    });
              });
        } else if (absl::Status status = FromVerifierStatus(grpc_status); !status.ok()) {
          std::move(done)(status);
        } else {
          std::vector<absl::StatusOr<verifier::v1::EvaluateIngestResponse>> results;
          results.reserve(owned->response.results_size());
          for (verifier::v1::EvaluateIngestBatchResult& result :
               *owned->response.mutable_results()) {
            results.push_back(
                ItemAnswer(result.status(), std::move(*result.mutable_decision())));
          }
          std::move(done)(std::move(results));
        }
        owned.reset();
        CallFinished();
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

void GrpcVerifierClient::FetchAvatar(absl::string_view request_id,
                                     const verifier::v1::FetchAvatarRequest& request,
                                     FetchAvatarCallback callback) {
  Invoke<verifier::v1::FetchAvatarResponse>(
      request_id, request, std::move(callback),
      [this](auto* context, auto* req, auto* resp, auto done) {
        stub_->async()->FetchAvatar(context, req, resp, std::move(done));
      });
}

}  // namespace portcullis::gateway
