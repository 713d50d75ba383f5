#pragma once

// A DeliveryStore whose every call answers UNIMPLEMENTED: for tests that need one and use none of
// it, and a base for fakes that override only what they use.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "verifier-service/src/store/delivery_store.h"

namespace portcullis::verifier::store::testing {

class NullDeliveryStore : public store::DeliveryStore {
 public:
  absl::StatusOr<store::SubscriptionRecord> CreateSubscription(
      const store::NewSubscription&, const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<std::vector<store::SubscriptionRecord>> ListSubscriptions(
      const std::string&, const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<int64_t> RemoveSubscription(const std::string&,
                                             const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<store::OutboundDelivery> QueuePing(const std::string&,
                                                  const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<std::vector<store::OutboundDelivery>> ListDeliveries(
      const std::string&, int, const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<int64_t> Replay(const store::ReplayFilter&, const store::SiteBinding&) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<std::vector<store::ClaimedDelivery>> Claim(const std::string&, int,
                                                            absl::Duration) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<int> RecordAttempts(const std::string&,
                                     absl::Span<const store::AttemptRecord>) override {
    return absl::UnimplementedError("not used");
  }
  absl::StatusOr<store::DeliveryQueueStats> QueueStats(int64_t) override {
    return absl::UnimplementedError("not used");
  }
};

}  // namespace portcullis::verifier::store::testing
