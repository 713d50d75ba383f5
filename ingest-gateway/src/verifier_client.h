#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "portcullis/verifier/v1/verifier.pb.h"

namespace portcullis::gateway {

// The gateway's only way to the verifier. Calls are asynchronous: the callback runs exactly once,
// on a thread of the implementation, and must not block. `request_id` is the id of the HTTP
// request the call serves (the one echoed in X-Request-Id); it travels with the call so the
// verifier's log lines for it carry it.
class VerifierClient {
 public:
  using SubmitCallback = std::function<void(absl::StatusOr<verifier::v1::SubmitMentionResponse>)>;
  using GetCallback = std::function<void(absl::StatusOr<verifier::v1::GetMentionResponse>)>;
  using EvaluateIngestCallback =
      std::function<void(absl::StatusOr<verifier::v1::EvaluateIngestResponse>)>;
  using ListMentionsCallback =
      std::function<void(absl::StatusOr<verifier::v1::ListMentionsResponse>)>;
  using ListPublicMentionsCallback =
      std::function<void(absl::StatusOr<verifier::v1::ListPublicMentionsResponse>)>;
  using CountPublicMentionsCallback =
      std::function<void(absl::StatusOr<verifier::v1::CountPublicMentionsResponse>)>;
  using ListMentionChangesCallback =
      std::function<void(absl::StatusOr<verifier::v1::ListMentionChangesResponse>)>;
  using FetchAvatarCallback =
      std::function<void(absl::StatusOr<verifier::v1::FetchAvatarResponse>)>;

  virtual ~VerifierClient() = default;

  virtual void SubmitMention(absl::string_view request_id,
                             const verifier::v1::SubmitMentionRequest& request,
                             SubmitCallback callback) = 0;
  virtual void GetMention(absl::string_view request_id,
                          const verifier::v1::GetMentionRequest& request, GetCallback callback) = 0;
  virtual void EvaluateIngest(absl::string_view request_id,
                              const verifier::v1::EvaluateIngestRequest& request,
                              EvaluateIngestCallback callback) = 0;
  virtual void ListMentions(absl::string_view request_id,
                            const verifier::v1::ListMentionsRequest& request,
                            ListMentionsCallback callback) = 0;
  // webmention.io's read API (issue 18).
  virtual void ListPublicMentions(absl::string_view request_id,
                                  const verifier::v1::ListPublicMentionsRequest& request,
                                  ListPublicMentionsCallback callback) = 0;
  virtual void CountPublicMentions(absl::string_view request_id,
                                   const verifier::v1::CountPublicMentionsRequest& request,
                                   CountPublicMentionsCallback callback) = 0;
  virtual void ListMentionChanges(absl::string_view request_id,
                                  const verifier::v1::ListMentionChangesRequest& request,
                                  ListMentionChangesCallback callback) = 0;
  // The avatar proxy (issue 17).
  virtual void FetchAvatar(absl::string_view request_id,
                           const verifier::v1::FetchAvatarRequest& request,
                           FetchAvatarCallback callback) = 0;
};

}  // namespace portcullis::gateway
