#pragma once

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// IngestStore on PostgreSQL (tables `ingest_decisions`, `ingest_items` and `dead_letters`,
// migrations/0005_create_ingest.sql).
class PgIngestStore final : public IngestStore {
 public:
  // `pool` must outlive the store.
  explicit PgIngestStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<std::optional<DecisionRecord>> FindDecision(const std::string& publisher,
                                                             const std::string& content_hash,
                                                             absl::Time now) override;
  absl::StatusOr<RecordResult> Record(const NewDecision& next, absl::Time now) override;
  absl::StatusOr<int64_t> SweepExpired(absl::Time now, int limit) override;
  absl::StatusOr<std::vector<DeadLetterRecord>> ListDeadLetters(
      const std::string& publisher, const std::optional<DeadLetterPosition>& after,
      int limit) override;
  absl::StatusOr<std::optional<DeadLetterRecord>> GetDeadLetter(
      const std::string& dead_letter_id) override;
  absl::Status DiscardDeadLetter(const std::string& dead_letter_id) override;
  absl::StatusOr<std::vector<AcceptedItemRecord>> ListAcceptedItems(int64_t after_cursor,
                                                                    int limit) override;

 private:
  // A Record waiting for a group commit.
  struct PendingRecord {
    const NewDecision* next;
    absl::Time now;
    absl::StatusOr<RecordResult> result = absl::UnknownError("not recorded yet");
    bool done = false;
  };

  // Record without a replay or a quarantine, by group commit: concurrent calls are recorded by
  // up to kMaxRecordLeaders callers at a time, each committing up to kMaxRecordBatch of the
  // waiting ones in one transaction (one WAL flush for all), every caller answered after that
  // commit. A batch that fails is recorded again one by one, so a failure reaches only the
  // callers it concerns.
  absl::StatusOr<RecordResult> RecordInGroup(const NewDecision& next, absl::Time now);
  void RecordBatch(std::vector<PendingRecord*> batch);
  // One statement, one round trip, its own transaction.
  absl::StatusOr<RecordResult> RecordInOneStatement(const NewDecision& next, absl::Time now);

  static constexpr int kMaxRecordBatch = 64;
  static constexpr int kMaxRecordLeaders = 4;

  PgConnectionPool& pool_;
  absl::Mutex batch_mu_;
  std::vector<PendingRecord*> waiting_ ABSL_GUARDED_BY(batch_mu_);
  int leaders_ ABSL_GUARDED_BY(batch_mu_) = 0;
};

}  // namespace portcullis::verifier::store
