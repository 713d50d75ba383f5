#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "verifier-service/src/store/retention_store.h"

namespace portcullis::verifier::lifecycle {

// How long each kind of row is kept (issue 17). Zero keeps those rows forever.
struct RetentionPeriods {
  // FAILED mentions, counted from the failure; VERIFIED mentions are kept until removed (by the
  // sender's 410/unmention, or an erasure). A FAILED pair past this is new again to intake.
  absl::Duration failed_mentions = absl::Hours(30 * 24);
  // Accepted ingest items (the outbox consumers page through), counted from acceptance.
  absl::Duration accepted_items = absl::Hours(7 * 24);
  // Quarantined deliveries nobody replayed or discarded, counted from quarantine.
  absl::Duration dead_letters = absl::Hours(30 * 24);
  // Dropped deliveries in the drop ledger, counted from receipt (each row also expires at
  // receipt + its publisher's keep_drops, whichever comes first).
  absl::Duration drops = absl::Hours(7 * 24);
  // Outbound deliveries that ended (delivered, or failed after their last attempt), counted from
  // the event; pending ones are kept until they end.
  absl::Duration finished_deliveries = absl::Hours(30 * 24);
};

struct RetentionSweeperOptions {
  RetentionPeriods periods;
  // Time between passes.
  absl::Duration interval = absl::Minutes(1);
  // Rows deleted per statement (and transaction) at most: short statements hold their row locks
  // briefly and write little WAL at once.
  int batch = 500;
  // Statements per pass at most (over every kind); the rest waits for the next pass.
  int max_batches_per_pass = 200;
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

// What one pass did.
struct SweepReport {
  // False: another verifier held the sweep lock, nothing was deleted here.
  bool ran = false;
  // Rows deleted, by table (every table with a retention, 0 included, when it ran).
  std::map<std::string, int64_t> deleted;
  int batches = 0;
  // The longest batch, start of its transaction to its commit as this process saw it: the
  // longest any row lock of the sweep was held.
  absl::Duration longest_batch;
};

// The one sweeper of expired rows: FAILED mentions, accepted items, dead letters, expired
// ingest decisions and the drop ledger's rows, each past its retention, deleted in bounded batches, each its own short
// transaction, by one verifier pod at a time (the store's sweep lock). On its own thread.
//
// Metrics (on `registry`):
//   portcullis_verifier_retention_rows_removed_total{table}  rows the sweeper deleted;
//   portcullis_verifier_retention_longest_batch_seconds      the longest batch of the last pass;
//   portcullis_verifier_retention_sweep_errors_total         passes that failed;
//   portcullis_verifier_table_rows{table}                    approximate rows per table, sampled
//                                                            after every pass (in every pod).
class RetentionSweeper {
 public:
  // `store` and `registry` must outlive the sweeper.
  RetentionSweeper(store::RetentionStore& store, RetentionSweeperOptions options,
                   prometheus::Registry& registry);
  ~RetentionSweeper();

  RetentionSweeper(const RetentionSweeper&) = delete;
  RetentionSweeper& operator=(const RetentionSweeper&) = delete;

  // One pass: for each kind of row, batches until one comes back short (or the pass's limit).
  absl::StatusOr<SweepReport> SweepOnce();

  // Runs a pass every interval until Stop(). Failures are logged, counted and retried next
  // interval.
  void Start();
  // Idempotent; waits for a pass in progress to finish.
  void Stop();

 private:
  void Loop();
  void SampleTableRows();

  store::RetentionStore& store_;
  const RetentionSweeperOptions options_;
  prometheus::Family<prometheus::Counter>& removed_;
  prometheus::Family<prometheus::Gauge>& table_rows_;
  prometheus::Gauge& longest_batch_;
  prometheus::Counter& errors_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace portcullis::verifier::lifecycle
