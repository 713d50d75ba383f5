#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "ingest-gateway/src/verifier_client.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::gateway {

// The one channel to the verifier: insecure for now, short reconnect backoff (a returning
// verifier is noticed within about two seconds) and round_robin, so a `dns:///` target over a
// headless Service spreads calls over every pod.
std::shared_ptr<grpc::Channel> MakeVerifierChannel(absl::string_view target);

// VerifierClient over gRPC's callback API. Every call has a deadline of `timeout`; statuses are
// converted with status::FromGrpcStatus.
class GrpcVerifierClient final : public VerifierClient {
 public:
  GrpcVerifierClient(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout);
  // Waits for calls in flight (bounded by their deadline) so no callback outlives the client.
  ~GrpcVerifierClient() override;

  void SubmitMention(const verifier::v1::SubmitMentionRequest& request,
                     SubmitCallback callback) override;
  void GetMention(const verifier::v1::GetMentionRequest& request, GetCallback callback) override;
  void EvaluateIngest(const verifier::v1::EvaluateIngestRequest& request,
                      EvaluateIngestCallback callback) override;
  void ListMentions(const verifier::v1::ListMentionsRequest& request,
                    ListMentionsCallback callback) override;

 private:
  // Starts one unary call: `start(context, request, response, done)` issues it on the stub; the
  // deadline is set, the call is counted in flight, and `callback` gets the response or status.
  template <typename Response, typename Request, typename Callback, typename Start>
  void Invoke(const Request& request, Callback callback, Start start);

  void CallStarted();
  void CallFinished();

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<verifier::v1::Verifier::Stub> stub_;
  const absl::Duration timeout_;

  std::mutex mu_;
  std::condition_variable idle_;
  int in_flight_ = 0;
};

}  // namespace portcullis::gateway
