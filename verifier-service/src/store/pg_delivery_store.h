#pragma once

#include "verifier-service/src/store/delivery_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// DeliveryStore on PostgreSQL (tables `subscriptions` and `deliveries`).
class PgDeliveryStore final : public DeliveryStore {
 public:
  // `pool` must outlive the store.
  explicit PgDeliveryStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<SubscriptionRecord> CreateSubscription(const NewSubscription& subscription,
                                                        const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<SubscriptionRecord>> ListSubscriptions(
      const std::string& site, const SiteBinding& visible_sites) override;
  absl::StatusOr<int64_t> RemoveSubscription(const std::string& id,
                                             const SiteBinding& visible_sites) override;
  absl::StatusOr<OutboundDelivery> QueuePing(const std::string& subscription_id,
                                             const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<OutboundDelivery>> ListDeliveries(
      const std::string& subscription_id, int limit, const SiteBinding& visible_sites) override;
  absl::StatusOr<int64_t> Replay(const ReplayFilter& filter,
                                 const SiteBinding& visible_sites) override;
  absl::StatusOr<std::vector<ClaimedDelivery>> Claim(const std::string& owner, int limit,
                                                     absl::Duration lease) override;
  absl::StatusOr<int> RecordAttempts(const std::string& owner,
                                     absl::Span<const AttemptRecord> attempts) override;
  absl::StatusOr<DeliveryQueueStats> QueueStats(int64_t cap) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
