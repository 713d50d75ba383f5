#pragma once

#include "absl/types/span.h"
#include "pqxx/connection"
#include "pqxx/transaction_base"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// IngestStore on PostgreSQL (tables `ingest_decisions`, `ingest_items` and `dead_letters`,
// migrations/0005_create_ingest.sql; the drop ledger `dropped_deliveries`, 0012_drop_ledger.sql).
class PgIngestStore final : public IngestStore {
 public:
  // `pool` must outlive the store.
  explicit PgIngestStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<std::optional<DecisionRecord>> FindDecision(const std::string& publisher,
                                                             const std::string& content_hash,
                                                             absl::Time now) override;
  absl::StatusOr<RecordResult> Record(const NewDecision& next, absl::Time now) override;
  absl::StatusOr<std::vector<DeadLetterRecord>> ListDeadLetters(
      const std::string& publisher, const std::optional<DeadLetterPosition>& after,
      int limit) override;
  absl::StatusOr<std::optional<DeadLetterRecord>> GetDeadLetter(
      const std::string& dead_letter_id) override;
  absl::Status DiscardDeadLetter(const std::string& dead_letter_id) override;
  absl::StatusOr<std::vector<AcceptedItemRecord>> ListAcceptedItems(int64_t after_cursor,
                                                                    int limit) override;
  absl::StatusOr<std::vector<DroppedDeliveryRecord>> ListDrops(
      const DropFilter& filter, const std::optional<DropPosition>& after, int limit) override;

  // Record(next, now) for each of `batch`, all in ONE transaction on `connection`, committed
  // before it returns (IngestWriter's batches, issue 21): one result per decision, in the order
  // of `batch`.
  // A batch of plain decisions (no replay, no re-evaluation, not quarantined) is one statement
  // (the first copy of each key; later copies one at a time after it). Decisions are recorded
  // in the order of their key (publisher, content hash), so concurrent batches take the keys'
  // locks in one order; copies of one key keep their order and are
  // decided one after the other, as if they had come one at a time (the first recorded, a later
  // one a duplicate of it, or its replacement when validly signed over an unsigned drop). A
  // per-decision problem (an unreadable stored decision) is that decision's result; anything
  // libpqxx throws leaves (the caller's PgConnectionPool::Run maps it) with nothing committed.
  std::vector<absl::StatusOr<RecordResult>> RecordBatch(pqxx::connection& connection,
                                                        absl::Span<const DecisionAt> batch);

 private:
  // Record's statements inside `transaction` (not committed): `result` gets what Record answers.
  absl::Status RecordInTransaction(pqxx::transaction_base& transaction, const NewDecision& next,
                                   absl::Time now, RecordResult* result);

  // RecordInTransaction for a re-evaluation's acceptance (NewDecision::reevaluation_of).
  absl::Status RecordReevaluation(pqxx::transaction_base& transaction, const NewDecision& next,
                                  absl::Time now, RecordResult* result);

  // Record without a replay or a quarantine: one statement (the batch statement with one
  // decision), one round trip, its own transaction.
  absl::StatusOr<RecordResult> RecordInOneStatement(const NewDecision& next, absl::Time now);

  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
