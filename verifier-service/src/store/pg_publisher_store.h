#pragma once

#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/publisher_store.h"

namespace portcullis::verifier::store {

// PublisherStore on PostgreSQL (tables `publishers` and `publisher_keys`,
// migrations/0005_create_ingest.sql).
class PgPublisherStore final : public PublisherStore {
 public:
  // `pool` must outlive the store.
  explicit PgPublisherStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<std::optional<PublisherRecord>> GetPublisher(const std::string& name) override;
  absl::StatusOr<AddPublisherResult> AddPublisher(const PublisherSettings& settings) override;
  absl::StatusOr<std::vector<PublisherRecord>> ListPublishers(const std::string& after,
                                                              int limit) override;
  absl::StatusOr<PublisherRecord> SetEnabled(const std::string& name, bool enabled) override;
  absl::StatusOr<PublisherRecord> UpdateSettings(const std::string& name,
                                                 const PublisherSettingsChange& change) override;
  absl::StatusOr<AddKeyResult> AddKey(const std::string& publisher, const std::string& algorithm,
                                      const std::string& material) override;
  absl::StatusOr<PublisherKeyRecord> RevokeKey(const std::string& publisher,
                                               const std::string& key_id) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
