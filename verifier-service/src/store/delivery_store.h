#pragma once

// Subscriptions and the deliveries outbox (issue 20, migrations/0013_deliveries.sql). The events
// themselves are queued by triggers in the transaction of the change that causes them; this store
// manages subscriptions, claims due deliveries for the workers (leases, FOR UPDATE SKIP LOCKED,
// as verification jobs are claimed) and records their attempts. Thread-safe, blocking; errors as
// MentionStore's.
//
// Tenant scoping: the subscription methods take the caller's `visible_sites` (empty: every site).
// A bound caller sees and manages only its sites' subscriptions; a publisher's (no site) need an
// unbound caller. A subscription outside the binding is NOT_FOUND, as one that does not exist.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "verifier-service/src/store/site_binding.h"

namespace portcullis::verifier::store {

struct NewSubscription {
  // Exactly one of them.
  std::string site;
  std::string publisher;
  std::string url;
  std::vector<std::string> events;
  // "v1" (signing_key: the HMAC secret bytes) or "v1a" (the 32-byte Ed25519 seed).
  std::string signature_version;
  std::string signing_key;
};

struct SubscriptionRecord {
  std::string id;
  NewSubscription subscription;
  // "active" or "disabled".
  std::string state;
  std::string disabled_reason;
  absl::Time created_at;
};

struct OutboundDelivery {
  std::string id;
  std::string subscription_id;
  std::string webhook_id;
  std::string event_type;
  std::string state;  // "pending", "delivered", "failed"
  int attempts = 0;
  int last_status_code = 0;
  std::string last_error;
  int64_t last_latency_ms = 0;
  absl::Time next_attempt_at;
  absl::Time created_at;
  std::optional<absl::Time> delivered_at;
  std::string body;
};

// A delivery claimed by a worker, with what sending it needs.
struct ClaimedDelivery {
  std::string id;
  std::string webhook_id;
  std::string event_type;
  std::string body;
  // Attempts including this one.
  int attempts = 0;
  std::string subscription_id;
  std::string url;
  std::string signature_version;
  std::string signing_key;
};

// How an attempt went and what comes next (delivery::Decide).
struct AttemptRecord {
  std::string delivery_id;
  std::string subscription_id;
  std::string state;  // "delivered", "pending", "failed"
  absl::Time next_attempt_at;
  int status_code = 0;
  std::string error;
  absl::Duration latency;
  // Set: the subscription is disabled with this reason (410), its pending deliveries failed.
  std::optional<std::string> disable_reason;
};

struct ReplayFilter {
  // One delivery, or the filters below (subscription_id required then).
  std::string delivery_id;
  std::string subscription_id;
  bool failed_only = false;
  std::optional<absl::Time> since;
  std::string event_type;
  bool dry_run = false;
};

// What /metrics shows of the queue.
struct DeliveryQueueStats {
  // Pending deliveries of active subscriptions, counted up to a cap.
  int64_t depth = 0;
  // Age of the oldest of them; zero when none.
  absl::Duration oldest_age;
};

inline constexpr int kMaxDeliveryPage = 1000;
inline constexpr int kMaxSubscriptionsListed = 1000;

class DeliveryStore {
 public:
  virtual ~DeliveryStore() = default;

  // NOT_FOUND when `site` is not a served site (PERMISSION_DENIED outside the binding; a
  // publisher subscription needs an unbound caller).
  virtual absl::StatusOr<SubscriptionRecord> CreateSubscription(
      const NewSubscription& subscription, const SiteBinding& visible_sites) = 0;
  // Oldest first; of one site when `site` is set.
  virtual absl::StatusOr<std::vector<SubscriptionRecord>> ListSubscriptions(
      const std::string& site, const SiteBinding& visible_sites) = 0;
  // The deliveries removed with it; NOT_FOUND when unknown (or not visible).
  virtual absl::StatusOr<int64_t> RemoveSubscription(const std::string& id,
                                                     const SiteBinding& visible_sites) = 0;
  // Queues a `ping` delivery; NOT_FOUND when unknown (or not visible).
  virtual absl::StatusOr<OutboundDelivery> QueuePing(const std::string& subscription_id,
                                                     const SiteBinding& visible_sites) = 0;
  // Newest first, at most `limit`.
  virtual absl::StatusOr<std::vector<OutboundDelivery>> ListDeliveries(
      const std::string& subscription_id, int limit, const SiteBinding& visible_sites) = 0;
  // How many were (dry run: would be) queued again: state pending, due now, attempts 0.
  virtual absl::StatusOr<int64_t> Replay(const ReplayFilter& filter,
                                         const SiteBinding& visible_sites) = 0;

  // Claims up to `limit` due deliveries of active subscriptions for `owner`, for `lease`.
  virtual absl::StatusOr<std::vector<ClaimedDelivery>> Claim(const std::string& owner, int limit,
                                                             absl::Duration lease) = 0;
  // Records attempts of deliveries `owner` holds, in one transaction: how many were recorded
  // (one whose lease `owner` lost records nothing).
  virtual absl::StatusOr<int> RecordAttempts(const std::string& owner,
                                             absl::Span<const AttemptRecord> attempts) = 0;
  virtual absl::StatusOr<DeliveryQueueStats> QueueStats(int64_t cap) = 0;
};

}  // namespace portcullis::verifier::store
