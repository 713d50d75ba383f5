#include "verifier-service/src/store/pg_queue_depth.h"

#include "pqxx/nontransaction"
#include "pqxx/row"

namespace portcullis::verifier::store {
namespace {

// The same "due" as PgJobStore's claim, with a LIMIT inside so the count is bounded.
constexpr char kCountDue[] =
    "SELECT count(*) FROM ("
    "  SELECT 1 FROM verification_jobs "
    "  WHERE run_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at <= now()) "
    "  LIMIT $1) due";

}  // namespace

absl::StatusOr<int64_t> CountDueJobs(PgConnectionPool& pool, int64_t cap) {
  int64_t count = 0;
  absl::Status status = pool.Run("count_due_jobs", [&](pqxx::connection& connection) {
    pqxx::nontransaction transaction(connection);
    count = transaction.exec_params1(kCountDue, cap)[0].as<int64_t>();
  });
  if (!status.ok()) {
    return status;
  }
  return count;
}

}  // namespace portcullis::verifier::store
