#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "portcullis/verifier/v1/verifier.pb.h"

namespace portcullis::gateway {

// The review page's way to the verifier (issue 16): every call carries the reviewer's own API
// token (`review` scope), never the gateway's, so the verifier decides what that person may see
// and change. Asynchronous like VerifierClient: the callback runs exactly once, must not block.
class ReviewClient {
 public:
  using QueueCallback =
      std::function<void(absl::StatusOr<verifier::v1::ListReviewQueueResponse>)>;
  using ReviewCallback = std::function<void(absl::StatusOr<verifier::v1::ReviewMentionResponse>)>;

  virtual ~ReviewClient() = default;

  virtual void ListReviewQueue(absl::string_view request_id, const std::string& token,
                               const verifier::v1::ListReviewQueueRequest& request,
                               QueueCallback callback) = 0;
  virtual void ReviewMention(absl::string_view request_id, const std::string& token,
                             const verifier::v1::ReviewMentionRequest& request,
                             ReviewCallback callback) = 0;
};

}  // namespace portcullis::gateway
