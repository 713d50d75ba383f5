#pragma once

#include <atomic>

#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "verifier-service/src/server/blocking_pool.h"
#include "verifier-service/src/store/mention_store.h"

namespace portcullis::verifier::server {

// portcullis.verifier.v1.Verifier on the gRPC callback API. Requests are validated inline (cheap,
// no I/O); store calls run on the blocking pool, which finishes the reactor. When the pool's
// queue is full, or before the database schema is ready, calls are answered UNAVAILABLE at once.
class VerifierService final : public portcullis::verifier::v1::Verifier::CallbackService {
 public:
  // `store` and `pool` must outlive the service and any call in flight.
  VerifierService(store::MentionStore& store, BlockingPool& pool) : store_(store), pool_(pool) {}

  // Calls are answered UNAVAILABLE until this is set (migrations applied).
  void SetReady(bool ready) { ready_.store(ready); }

  grpc::ServerUnaryReactor* SubmitMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::SubmitMentionRequest* request,
      portcullis::verifier::v1::SubmitMentionResponse* response) override;

  grpc::ServerUnaryReactor* GetMention(
      grpc::CallbackServerContext* context,
      const portcullis::verifier::v1::GetMentionRequest* request,
      portcullis::verifier::v1::GetMentionResponse* response) override;

 private:
  store::MentionStore& store_;
  BlockingPool& pool_;
  // Query parameters left out of the de-duplication key.
  const url::TrackingParameters tracking_ = url::TrackingParameters::Default();
  std::atomic<bool> ready_{false};
};

}  // namespace portcullis::verifier::server
