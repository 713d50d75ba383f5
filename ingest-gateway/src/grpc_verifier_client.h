#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/grpc/channel_credentials.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "ingest-gateway/src/call_coalescer.h"
#include "ingest-gateway/src/readiness.h"
#include "ingest-gateway/src/verifier_client.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::gateway {

// The one channel to the verifier: short reconnect backoff (a returning verifier is noticed
// within about two seconds) and round_robin, so a `dns:///` target over a headless Service
// spreads calls over every pod. Every call carries `token` as a bearer token (none when empty);
// `security` (grpc_tls::MakeChannelSecurity) gives the credentials and the server name to
// expect; null credentials mean plaintext.
std::shared_ptr<grpc::Channel> MakeVerifierChannel(absl::string_view target,
                                                   std::string token = "",
                                                   const grpc_tls::ChannelSecurity& security = {});

// Readiness against an authenticating verifier: grpc.health.v1 stays open to everyone, so
// SERVING alone does not show that the verifier accepts the gateway's token. After SERVING, this
// sends GetMention with an empty id, which the verifier answers INVALID_ARGUMENT after
// authenticating and checking the scope and before touching the database; UNAUTHENTICATED or
// PERMISSION_DENIED there means every sender would get an error, so the gateway is not ready.
class AuthorizedHealthChecker final : public HealthChecker {
 public:
  explicit AuthorizedHealthChecker(std::shared_ptr<grpc::Channel> channel);
  absl::Status Check(absl::Duration timeout) override;

 private:
  GrpcHealthChecker health_;
  std::unique_ptr<verifier::v1::Verifier::Stub> stub_;
};

// VerifierClient over gRPC's callback API. Every call has a deadline of `timeout` and carries its
// request id as metadata grpc_metadata::kRequestIdMetadata (none when empty); statuses are
// converted with FromVerifierStatus (answers.h).
//
// SubmitMention and EvaluateIngest go out as the batch calls SubmitMentions and
// EvaluateIngestBatch (issue 21), coalesced by a CallCoalescer (call_coalescer.h): concurrent
// submissions share one call; each keeps its own deadline (`timeout` from when it was made) and
// gets its own answer, mapped as a single call's would be (a per-item status, or the whole
// call's status for each item). A verifier that does not know the batch calls (UNIMPLEMENTED,
// during a rolling upgrade) gets that call's items again as single calls.
class GrpcVerifierClient final : public VerifierClient {
 public:
  GrpcVerifierClient(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout,
                     CallCoalescerOptions coalescing = {});
  // Waits for calls in flight (bounded by their deadline) so no callback outlives the client.
  ~GrpcVerifierClient() override;

  void SubmitMention(absl::string_view request_id,
                     const verifier::v1::SubmitMentionRequest& request,
                     SubmitCallback callback) override;
  void GetMention(absl::string_view request_id, const verifier::v1::GetMentionRequest& request,
                  GetCallback callback) override;
  void EvaluateIngest(absl::string_view request_id,
                      const verifier::v1::EvaluateIngestRequest& request,
                      EvaluateIngestCallback callback) override;
  void ListMentions(absl::string_view request_id, const verifier::v1::ListMentionsRequest& request,
                    ListMentionsCallback callback) override;
  void ListPublicMentions(absl::string_view request_id,
                          const verifier::v1::ListPublicMentionsRequest& request,
                          ListPublicMentionsCallback callback) override;
  void CountPublicMentions(absl::string_view request_id,
                           const verifier::v1::CountPublicMentionsRequest& request,
                           CountPublicMentionsCallback callback) override;
  void ListMentionChanges(absl::string_view request_id,
                          const verifier::v1::ListMentionChangesRequest& request,
                          ListMentionChangesCallback callback) override;
  void FetchAvatar(absl::string_view request_id, const verifier::v1::FetchAvatarRequest& request,
                   FetchAvatarCallback callback) override;

 private:
  // Starts one unary call: `start(context, request, response, done)` issues it on the stub; the
  // deadline and the request id are set, the call is counted in flight, and `callback` gets the
  // response or status.
  template <typename Response, typename Request, typename Callback, typename Start>
  void Invoke(absl::string_view request_id, const Request& request, Callback callback, Start start);

  void CallStarted();
  void CallFinished();

  // The coalescers' calls.
  using SubmitCoalescer =
      CallCoalescer<verifier::v1::SubmitMentionRequest, verifier::v1::SubmitMentionResponse>;
  using IngestCoalescer =
      CallCoalescer<verifier::v1::EvaluateIngestRequest, verifier::v1::EvaluateIngestResponse>;
  void SendSubmitMentions(const std::vector<SubmitCoalescer::Item>& items, absl::Time deadline,
                          SubmitCoalescer::CallDone done);
  void SendEvaluateIngestBatch(const std::vector<IngestCoalescer::Item>& items,
                               absl::Time deadline, IngestCoalescer::CallDone done);
  // The items of a batch call the verifier did not know, as single calls; `done` when all have
  // answered.
  template <typename Coalescer, typename Single>
  void SendOneByOne(const std::vector<typename Coalescer::Item>& items,
                    typename Coalescer::CallDone done, Single single);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<verifier::v1::Verifier::Stub> stub_;
  const absl::Duration timeout_;

  std::mutex mu_;
  std::condition_variable idle_;
  int in_flight_ = 0;

  // Last: destroyed first, after the destructor waited for every call in flight (no item waits
  // in a coalescer while none is in flight).
  SubmitCoalescer submissions_;
  IngestCoalescer deliveries_;
};

}  // namespace portcullis::gateway
