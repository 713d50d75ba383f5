#include "verifier-service/src/store/pg_retention_store.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "pqxx/nontransaction"
#include "pqxx/result"
#include "pqxx/row"
#include "pqxx/transaction"

namespace portcullis::verifier::store {
namespace {

// The sweep lock's key (pg_try_advisory_lock), distinct from the migrator's and the outbox's.
#define PORTCULLIS_SWEEP_LOCK_KEY "7243305411720019317"
constexpr PgStatement kRetentionTryLock{
    "retention_try_lock", "SELECT pg_try_advisory_lock(" PORTCULLIS_SWEEP_LOCK_KEY ")"};
constexpr PgStatement kRetentionUnlock{"retention_unlock",
                                       "SELECT pg_advisory_unlock(" PORTCULLIS_SWEEP_LOCK_KEY ")"};

// A bigint parameter of Unix microseconds as a timestamptz, exactly.
#define PORTCULLIS_RETENTION_TIME(param) \
  "('epoch'::timestamptz + " param "::bigint * interval '1 microsecond')"

// Each batch picks at most $2 rows by the index of its condition, oldest first, skipping rows
// another transaction holds (an intake re-sending that pair, a replay of that dead letter: they
// are taken next time), and deletes them by key; the condition is checked again on the row
// being deleted, so a row changed since (a FAILED mention submitted again) is left alone.
constexpr PgStatement kDeleteFailedMentions{
    "retention_delete_failed_mentions",
    "DELETE FROM mentions WHERE id = ANY(ARRAY("
    "  SELECT id FROM mentions WHERE state = 'FAILED' "
    "    AND updated_at < " PORTCULLIS_RETENTION_TIME("$1") " "
    "  ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)) "
    "AND state = 'FAILED' AND updated_at < " PORTCULLIS_RETENTION_TIME("$1")};

constexpr PgStatement kDeleteAcceptedItems{
    "retention_delete_accepted_items",
    "DELETE FROM ingest_items WHERE cursor = ANY(ARRAY("
    "  SELECT cursor FROM ingest_items WHERE accepted_at < " PORTCULLIS_RETENTION_TIME("$1") " "
    "  ORDER BY accepted_at LIMIT $2 FOR UPDATE SKIP LOCKED))"};

constexpr PgStatement kDeleteDeadLetters{
    "retention_delete_dead_letters",
    "DELETE FROM dead_letters WHERE id = ANY(ARRAY("
    "  SELECT id FROM dead_letters WHERE created_at < " PORTCULLIS_RETENTION_TIME("$1") " "
    "  ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))"};

constexpr PgStatement kDeleteExpiredDecisions{
    "retention_delete_expired_decisions",
    "DELETE FROM ingest_decisions WHERE ctid = ANY(ARRAY("
    "  SELECT ctid FROM ingest_decisions WHERE expires_at <= " PORTCULLIS_RETENTION_TIME("$1") " "
    "  ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)) "
    "AND expires_at <= " PORTCULLIS_RETENTION_TIME("$1")};

// The drop ledger: rows past --drop_retention, and rows past their publisher's keep_drops.
// (Deleting gives their bytes back to the publisher's cap: the trigger of 0012_drop_ledger.sql.)
constexpr PgStatement kDeleteOldDrops{
    "retention_delete_old_drops",
    "DELETE FROM dropped_deliveries WHERE id = ANY(ARRAY("
    "  SELECT id FROM dropped_deliveries WHERE received_at < " PORTCULLIS_RETENTION_TIME("$1") " "
    "  ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED))"};

constexpr PgStatement kDeleteExpiredDrops{
    "retention_delete_expired_drops",
    "DELETE FROM dropped_deliveries WHERE id = ANY(ARRAY("
    "  SELECT id FROM dropped_deliveries WHERE expires_at <= " PORTCULLIS_RETENTION_TIME("$1") " "
    "  ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED))"};

// Outbound deliveries that ended (delivered, or failed for good); pending ones are never swept.
constexpr PgStatement kDeleteFinishedDeliveries{
    "retention_delete_finished_deliveries",
    "DELETE FROM deliveries WHERE id = ANY(ARRAY("
    "  SELECT id FROM deliveries WHERE state <> 'pending' AND created_at < "
    PORTCULLIS_RETENTION_TIME("$1") " ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)) "
    "AND state <> 'pending'"};

// n_live_tup: the statistics collector's live rows, kept current by every write (a count(*)
// of a large table would cost a scan per sample).
constexpr PgStatement kRetentionEstimateRows{
    "retention_estimate_rows",
    "SELECT t.name, coalesce(s.n_live_tup, 0) "
    "FROM unnest(ARRAY['mentions', 'verification_jobs', 'ingest_decisions', 'ingest_items', "
    "  'dead_letters', 'erasures', 'dropped_deliveries', 'deliveries']) AS t(name) "
    "LEFT JOIN pg_stat_user_tables s ON s.relname = t.name AND s.schemaname = current_schema() "
    "ORDER BY t.name"};

#undef PORTCULLIS_RETENTION_TIME
#undef PORTCULLIS_SWEEP_LOCK_KEY

const PgStatement& RetentionDeleteStatement(ExpiringRows rows) {
  switch (rows) {
    case ExpiringRows::kFailedMentions:
      return kDeleteFailedMentions;
    case ExpiringRows::kAcceptedItems:
      return kDeleteAcceptedItems;
    case ExpiringRows::kDeadLetters:
      return kDeleteDeadLetters;
    case ExpiringRows::kExpiredDecisions:
      return kDeleteExpiredDecisions;
    case ExpiringRows::kOldDrops:
      return kDeleteOldDrops;
    case ExpiringRows::kExpiredDrops:
      return kDeleteExpiredDrops;
    case ExpiringRows::kFinishedDeliveries:
      return kDeleteFinishedDeliveries;
  }
  return kDeleteExpiredDecisions;
}

// Batches on the connection holding the lock. A database error ends the batch with a status
// for the sweeper and is kept, so that the pool (which must know whether the connection is
// still usable) sees it once the pass is over.
class PgRetentionSweepSession final : public RetentionSweepSession {
 public:
  explicit PgRetentionSweepSession(pqxx::connection& connection) : connection_(connection) {}

  absl::StatusOr<int64_t> DeleteBatch(ExpiringRows rows, absl::Time cutoff, int limit) override {
    if (failure_ != nullptr) {
      return absl::UnavailableError("retention sweep: the connection failed earlier");
    }
    try {
      pqxx::work transaction(connection_);
      const int64_t deleted = ExecPrepared(transaction, RetentionDeleteStatement(rows),
                                           absl::ToUnixMicros(cutoff), limit)
                                  .affected_rows();
      transaction.commit();
      return deleted;
    } catch (...) {
      failure_ = std::current_exception();
      bool unusable = false;
      return StatusFromCurrentDatabaseException("retention_sweep", &unusable);
    }
  }

  std::exception_ptr failure() const { return failure_; }

 private:
  pqxx::connection& connection_;
  std::exception_ptr failure_;
};

}  // namespace

const char* ExpiringRowsTable(ExpiringRows rows) {
  switch (rows) {
    case ExpiringRows::kFailedMentions:
      return "mentions";
    case ExpiringRows::kAcceptedItems:
      return "ingest_items";
    case ExpiringRows::kDeadLetters:
      return "dead_letters";
    case ExpiringRows::kExpiredDecisions:
      return "ingest_decisions";
    case ExpiringRows::kOldDrops:
    case ExpiringRows::kExpiredDrops:
      return "dropped_deliveries";
    case ExpiringRows::kFinishedDeliveries:
      return "deliveries";
  }
  return "unknown";
}

absl::StatusOr<bool> PgRetentionStore::WithSweepLock(
    absl::FunctionRef<absl::Status(RetentionSweepSession&)> sweep) {
  bool locked = false;
  absl::Status sweep_status;
  absl::Status status = pool_.Run("retention_sweep", [&](pqxx::connection& connection) {
    {
      pqxx::nontransaction transaction(connection);
      locked = ExecPrepared1(transaction, kRetentionTryLock)[0].as<bool>();
    }
    if (!locked) {
      return;
    }
    PgRetentionSweepSession session(connection);
    sweep_status = sweep(session);
    if (session.failure() != nullptr) {
      // The pool decides about the connection (a lost one takes the lock with it); a usable one
      // is unlocked first so that it does not go back to the pool still holding the lock.
      try {
        pqxx::nontransaction transaction(connection);
        ExecPrepared(transaction, kRetentionUnlock);
      } catch (...) {
      }
      std::rethrow_exception(session.failure());
    }
    pqxx::nontransaction transaction(connection);
    ExecPrepared(transaction, kRetentionUnlock);
  });
  if (!status.ok()) {
    return status;
  }
  if (!sweep_status.ok()) {
    return sweep_status;
  }
  return locked;
}

absl::StatusOr<std::vector<TableRowEstimate>> PgRetentionStore::EstimateTableRows() {
  std::vector<TableRowEstimate> estimates;
  absl::Status status = pool_.Run("estimate_table_rows", [&](pqxx::connection& connection) {
    estimates.clear();
    pqxx::nontransaction transaction(connection);
    for (const pqxx::row& row : ExecPrepared(transaction, kRetentionEstimateRows)) {
      estimates.push_back({row[0].as<std::string>(), row[1].as<int64_t>()});
    }
  });
  if (!status.ok()) {
    return status;
  }
  return estimates;
}

}  // namespace portcullis::verifier::store
