#pragma once

#include <memory>

#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// MentionStore on PostgreSQL (table `mentions`, migrations/0001_create_mentions.sql).
class PgMentionStore final : public MentionStore {
 public:
  // `pool` must outlive the store.
  explicit PgMentionStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<UpsertResult> UpsertPending(const NewMention& mention) override;
  absl::StatusOr<StoredMention> Get(absl::string_view mention_id) override;
  absl::Status Ping() override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
