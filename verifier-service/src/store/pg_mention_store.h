#pragma once

#include <atomic>
#include <memory>

#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// MentionStore on PostgreSQL (table `mentions`, migrations/0001_create_mentions.sql; reads
// `sites` and `targets`, migrations/0002_create_sites_and_targets.sql; queues into
// `verification_jobs`, migrations/0003_create_verification_jobs.sql; content and listing,
// migrations/0004_mention_content.sql).
class PgMentionStore final : public MentionStore {
 public:
  // `pool` must outlive the store. A FAILED mention submitted again starts over as PENDING once
  // its failure is older than `failed_retention`.
  explicit PgMentionStore(PgConnectionPool& pool, absl::Duration failed_retention = absl::Hours(24))
      : pool_(pool), failed_retention_(failed_retention) {}

  // Before use: the admission limits of Submit (none by default).
  void SetLimits(SubmitLimits limits) { limits_ = limits; }

  absl::StatusOr<SubmitResult> Submit(const NewMention& mention) override;
  absl::StatusOr<StoredMention> Get(absl::string_view mention_id,
                                    const SiteBinding& visible_sites) override;
  absl::StatusOr<MentionPage> List(const MentionQuery& query,
                                   const SiteBinding& visible_sites) override;
  absl::Status Ping() override;

 private:
  // Notifies the workers that jobs were queued (after the commit that queued them).
  void WakeWorkers();

  PgConnectionPool& pool_;
  const absl::Duration failed_retention_;
  SubmitLimits limits_;
  std::atomic<bool> wake_requested_{false};
  std::atomic<bool> waking_{false};
};

}  // namespace portcullis::verifier::store
