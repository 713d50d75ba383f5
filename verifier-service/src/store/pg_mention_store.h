#pragma once

#include <memory>

#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// MentionStore on PostgreSQL (table `mentions`, migrations/0001_create_mentions.sql; reads
// `sites` and `targets`, migrations/0002_create_sites_and_targets.sql).
class PgMentionStore final : public MentionStore {
 public:
  // `pool` must outlive the store.
  explicit PgMentionStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<SubmitResult> Submit(const NewMention& mention) override;
  absl::StatusOr<StoredMention> Get(absl::string_view mention_id) override;
  absl::Status Ping() override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
