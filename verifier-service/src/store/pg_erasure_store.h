#pragma once

#include "verifier-service/src/store/erasure_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// ErasureStore on PostgreSQL (`erasures` and `erasure_salt`, migrations/0011_data_lifecycle.sql).
// Mentions are DELETEd (their jobs go by the foreign key's cascade), so that whatever watches
// deletes (a change feed's trigger) sees them go.
class PgErasureStore final : public ErasureStore {
 public:
  // `pool` must outlive the store.
  explicit PgErasureStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<ErasureOutcome> Erase(const ErasureKey& key, bool dry_run,
                                       const SiteBinding& sites) override;
  absl::StatusOr<int64_t> Undo(const ErasureKey& key, const SiteBinding& sites) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
