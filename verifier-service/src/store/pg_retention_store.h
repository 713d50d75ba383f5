#pragma once

#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/retention_store.h"

namespace portcullis::verifier::store {

// RetentionStore on PostgreSQL. The sweep lock is a session-level advisory lock on the
// connection the whole pass runs on (migrations/0011_data_lifecycle.sql has the indexes the
// batches use).
class PgRetentionStore final : public RetentionStore {
 public:
  // `pool` must outlive the store; a pass holds one of its connections.
  explicit PgRetentionStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<bool> WithSweepLock(
      absl::FunctionRef<absl::Status(RetentionSweepSession&)> sweep) override;
  absl::StatusOr<std::vector<TableRowEstimate>> EstimateTableRows() override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
