#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace portcullis::verifier::store {

// The kinds of rows that expire, each one table's rows matching one condition (issue 17).
enum class ExpiringRows {
  kFailedMentions,    // mentions FAILED (updated_at) before the cutoff; VERIFIED are kept.
  kAcceptedItems,     // ingest_items accepted before the cutoff (the outbox).
  kDeadLetters,       // dead_letters created before the cutoff.
  kExpiredDecisions,  // ingest_decisions whose expires_at is at or before the cutoff (now).
  kOldDrops,          // dropped_deliveries (the drop ledger) received before the cutoff.
  kExpiredDrops,      // dropped_deliveries whose expires_at (the publisher's keep_drops) is at
                      // or before the cutoff (now).
  kFinishedDeliveries,  // deliveries (outbound events) delivered or failed, created before the
                        // cutoff; pending ones are kept.
};

inline constexpr std::array<ExpiringRows, 7> kAllExpiringRows = {
    ExpiringRows::kFailedMentions,    ExpiringRows::kAcceptedItems, ExpiringRows::kDeadLetters,
    ExpiringRows::kExpiredDecisions, ExpiringRows::kOldDrops,      ExpiringRows::kExpiredDrops,
    ExpiringRows::kFinishedDeliveries};

// The table the rows are in ("mentions", "ingest_items", ...), as metrics label them.
const char* ExpiringRowsTable(ExpiringRows rows);

// A table's approximate row count (PostgreSQL's statistics, not a count(*)).
struct TableRowEstimate {
  std::string table;
  int64_t rows = 0;
};

// What the sweeper deletes with, on one connection that holds the sweep lock.
class RetentionSweepSession {
 public:
  virtual ~RetentionSweepSession() = default;
  // Deletes at most `limit` of `rows` older than `cutoff`, oldest first, in a transaction of its
  // own (so the row locks it takes are held for this one statement): the rows deleted.
  virtual absl::StatusOr<int64_t> DeleteBatch(ExpiringRows rows, absl::Time cutoff, int limit) = 0;
};

// The retention sweeper's database side.
class RetentionStore {
 public:
  virtual ~RetentionStore() = default;

  // Runs `sweep` while holding the sweep lock, which every verifier pod shares (one sweeps at a
  // time): false, without running it, when another holds the lock. The lock is released when
  // `sweep` returns (or the connection dies). A failure of `sweep` is returned as is.
  virtual absl::StatusOr<bool> WithSweepLock(
      absl::FunctionRef<absl::Status(RetentionSweepSession&)> sweep) = 0;

  // Approximate rows of every table with a retention (and mentions' total).
  virtual absl::StatusOr<std::vector<TableRowEstimate>> EstimateTableRows() = 0;
};

}  // namespace portcullis::verifier::store
