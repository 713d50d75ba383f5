#include "verifier-service/src/lifecycle/retention_sweeper.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "common/logging/log.h"

namespace portcullis::verifier::lifecycle {
namespace {

// The cutoff of `rows` at `now`: rows older are deleted. None: kept forever.
std::optional<absl::Time> RetentionCutoff(store::ExpiringRows rows, const RetentionPeriods& periods,
                                          absl::Time now) {
  absl::Duration period;
  switch (rows) {
    case store::ExpiringRows::kFailedMentions:
      period = periods.failed_mentions;
      break;
    case store::ExpiringRows::kAcceptedItems:
      period = periods.accepted_items;
      break;
    case store::ExpiringRows::kDeadLetters:
      period = periods.dead_letters;
      break;
    case store::ExpiringRows::kOldDrops:
      period = periods.drops;
      break;
    case store::ExpiringRows::kFinishedDeliveries:
      period = periods.finished_deliveries;
      break;
    case store::ExpiringRows::kExpiredDecisions:
    case store::ExpiringRows::kExpiredDrops:
      return now;  // A decision (a kept drop) carries its own expiry.
  }
  if (period <= absl::ZeroDuration()) {
    return std::nullopt;
  }
  return now - period;
}

}  // namespace

RetentionSweeper::RetentionSweeper(store::RetentionStore& store, RetentionSweeperOptions options,
                                   prometheus::Registry& registry)
    : store_(store),
      options_(std::move(options)),
      removed_(prometheus::BuildCounter()
                   .Name("portcullis_verifier_retention_rows_removed_total")
                   .Help("Rows the retention sweeper deleted, by table.")
                   .Register(registry)),
      table_rows_(prometheus::BuildGauge()
                      .Name("portcullis_verifier_table_rows")
                      .Help("Approximate rows per table (PostgreSQL statistics), sampled after "
                            "every retention pass.")
                      .Register(registry)),
      longest_batch_(prometheus::BuildGauge()
                         .Name("portcullis_verifier_retention_longest_batch_seconds")
                         .Help("The longest delete batch (one transaction) of the last retention "
                               "pass this pod ran.")
                         .Register(registry)
                         .Add({})),
      errors_(prometheus::BuildCounter()
                  .Name("portcullis_verifier_retention_sweep_errors_total")
                  .Help("Retention passes that failed (retried next interval).")
                  .Register(registry)
                  .Add({})) {
  for (store::ExpiringRows rows : store::kAllExpiringRows) {
    removed_.Add({{"table", store::ExpiringRowsTable(rows)}});
  }
}

RetentionSweeper::~RetentionSweeper() { Stop(); }

absl::StatusOr<SweepReport> RetentionSweeper::SweepOnce() {
  const absl::Time now = options_.clock();
  SweepReport report;
  absl::StatusOr<bool> ran = store_.WithSweepLock([&](store::RetentionSweepSession& session) {
    for (store::ExpiringRows rows : store::kAllExpiringRows) {
      const std::optional<absl::Time> cutoff = RetentionCutoff(rows, options_.periods, now);
      if (!cutoff.has_value()) {
        continue;
      }
      int64_t& deleted = report.deleted[store::ExpiringRowsTable(rows)];
      while (report.batches < options_.max_batches_per_pass) {
        const absl::Time started = absl::Now();
        absl::StatusOr<int64_t> batch = session.DeleteBatch(rows, *cutoff, options_.batch);
        report.longest_batch = std::max(report.longest_batch, absl::Now() - started);
        ++report.batches;
        if (!batch.ok()) {
          return batch.status();
        }
        deleted += *batch;
        removed_.Add({{"table", store::ExpiringRowsTable(rows)}})
            .Increment(static_cast<double>(*batch));
        if (*batch < options_.batch) {
          break;
        }
      }
    }
    return absl::OkStatus();
  });
  if (!ran.ok()) {
    errors_.Increment();
    return ran.status();
  }
  report.ran = *ran;
  if (report.ran) {
    longest_batch_.Set(absl::ToDoubleSeconds(report.longest_batch));
  }
  return report;
}

void RetentionSweeper::SampleTableRows() {
  absl::StatusOr<std::vector<store::TableRowEstimate>> estimates = store_.EstimateTableRows();
  if (!estimates.ok()) {
    return;  // The pass's own failure (if any) was logged; the gauges keep their last values.
  }
  for (const store::TableRowEstimate& estimate : *estimates) {
    table_rows_.Add({{"table", estimate.table}}).Set(static_cast<double>(estimate.rows));
  }
}

void RetentionSweeper::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) {
    return;
  }
  thread_ = std::thread([this] { Loop(); });
}

void RetentionSweeper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void RetentionSweeper::Loop() {
  bool failing = false;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.interval)) {
        return;
      }
    }
    absl::StatusOr<SweepReport> report = SweepOnce();
    if (!report.ok()) {
      if (!failing) {  // One line per outage, not one per pass.
        logging::Warn("retention sweep failed, retrying every {}: {}",
                      absl::FormatDuration(options_.interval),
                      std::string(report.status().message()));
      }
      failing = true;
    } else {
      failing = false;
      int64_t total = 0;
      for (const auto& [table, deleted] : report->deleted) {
        total += deleted;
      }
      if (total > 0) {
        logging::Info("retention sweep deleted rows={} batches={} longest_batch={}", total,
                      report->batches, absl::FormatDuration(report->longest_batch));
      }
    }
    SampleTableRows();
  }
}

}  // namespace portcullis::verifier::lifecycle
