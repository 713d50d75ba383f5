#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ingest-gateway/src/verifier_client.h"

namespace portcullis::gateway::testing {

// Answers every call at once with the configured result and records the requests and their
// request ids. With `hold_submits`, SubmitMention keeps its callbacks instead, and the destructor
// answers them CANCELLED, as the gRPC client's destructor waits for the calls in flight to end.
class FakeVerifierClient final : public VerifierClient {
 public:
  ~FakeVerifierClient() override {
    std::vector<SubmitCallback> held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held.swap(held_submits_);
    }
    for (SubmitCallback& callback : held) {
      callback(absl::CancelledError("client destroyed"));
    }
  }

  void SubmitMention(absl::string_view request_id,
                     const verifier::v1::SubmitMentionRequest& request,
                     SubmitCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      submits.push_back(request);
      request_ids.emplace_back(request_id);
      if (hold_submits) {
        held_submits_.push_back(std::move(callback));
        return;
      }
    }
    callback(submit_result);
  }

  size_t held_submits() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_submits_.size();
  }

  void GetMention(absl::string_view request_id, const verifier::v1::GetMentionRequest& request,
                  GetCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      gets.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(get_result);
  }

  void EvaluateIngest(absl::string_view request_id,
                      const verifier::v1::EvaluateIngestRequest& request,
                      EvaluateIngestCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      evaluations.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(evaluate_result);
  }

  void ListMentions(absl::string_view request_id, const verifier::v1::ListMentionsRequest& request,
                    ListMentionsCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      lists.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(list_result);
  }

  void ListPublicMentions(absl::string_view request_id, const verifier::v1::ListPublicMentionsRequest& request,
                ListPublicMentionsCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      public_list_requests.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(public_list_result);
  }

  void CountPublicMentions(absl::string_view request_id, const verifier::v1::CountPublicMentionsRequest& request,
                CountPublicMentionsCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      public_count_requests.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(public_count_result);
  }

  void ListMentionChanges(absl::string_view request_id, const verifier::v1::ListMentionChangesRequest& request,
                ListMentionChangesCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      changes_requests.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(changes_result);
  }

  void FetchAvatar(absl::string_view request_id, const verifier::v1::FetchAvatarRequest& request,
                   FetchAvatarCallback callback) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      avatar_requests.push_back(request);
      request_ids.emplace_back(request_id);
    }
    callback(avatar_result);
  }

  absl::StatusOr<verifier::v1::FetchAvatarResponse> avatar_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::FetchAvatarRequest> avatar_requests;
  absl::StatusOr<verifier::v1::SubmitMentionResponse> submit_result =
      absl::UnavailableError("not configured");
  absl::StatusOr<verifier::v1::GetMentionResponse> get_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::SubmitMentionRequest> submits;
  std::vector<verifier::v1::GetMentionRequest> gets;
  absl::StatusOr<verifier::v1::EvaluateIngestResponse> evaluate_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::EvaluateIngestRequest> evaluations;
  absl::StatusOr<verifier::v1::ListMentionsResponse> list_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::ListMentionsRequest> lists;
  absl::StatusOr<verifier::v1::ListPublicMentionsResponse> public_list_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::ListPublicMentionsRequest> public_list_requests;
  absl::StatusOr<verifier::v1::CountPublicMentionsResponse> public_count_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::CountPublicMentionsRequest> public_count_requests;
  absl::StatusOr<verifier::v1::ListMentionChangesResponse> changes_result =
      absl::UnavailableError("not configured");
  std::vector<verifier::v1::ListMentionChangesRequest> changes_requests;
  // The request id of every call, in order.
  std::vector<std::string> request_ids;
  // Set before the first call.
  bool hold_submits = false;

 private:
  std::mutex mu_;
  std::vector<SubmitCallback> held_submits_;
};

}  // namespace portcullis::gateway::testing
