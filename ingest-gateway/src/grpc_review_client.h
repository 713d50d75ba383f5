#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "ingest-gateway/src/review_client.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::gateway {

// ReviewClient over gRPC's callback API, on a channel that carries no token of its own
// (MakeVerifierChannel with an empty token): each call sends `authorization: Bearer <token>`
// of the reviewer. Deadline `timeout`; statuses converted with status::FromGrpcStatus (an
// UNAUTHENTICATED is the reviewer's token refused, not the gateway's).
class GrpcReviewClient final : public ReviewClient {
 public:
  GrpcReviewClient(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout);
  // Waits for calls in flight (bounded by their deadline).
  ~GrpcReviewClient() override;

  void ListReviewQueue(absl::string_view request_id, const std::string& token,
                       const verifier::v1::ListReviewQueueRequest& request,
                       QueueCallback callback) override;
  void ReviewMention(absl::string_view request_id, const std::string& token,
                     const verifier::v1::ReviewMentionRequest& request,
                     ReviewCallback callback) override;

 private:
  template <typename Response, typename Request, typename Callback, typename Start>
  void InvokeAsReviewer(absl::string_view request_id, const std::string& token,
                        const Request& request, Callback callback, Start start);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<verifier::v1::Verifier::Stub> stub_;
  const absl::Duration timeout_;

  std::mutex mu_;
  std::condition_variable idle_;
  int in_flight_ = 0;
};

}  // namespace portcullis::gateway
