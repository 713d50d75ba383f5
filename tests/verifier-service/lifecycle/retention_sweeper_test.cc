// The retention sweeper's logic against a fake store: which rows each kind's cutoff selects, the
// batching and its bound, the sweep lock held elsewhere, and what a scrape shows.
#include "verifier-service/src/lifecycle/retention_sweeper.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/metrics/text_exposition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::lifecycle {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// Rows by kind, each with its age timestamp; DeleteBatch deletes up to `limit` older than the
// cutoff and records every call.
class FakeRetentionStore final : public store::RetentionStore, store::RetentionSweepSession {
 public:
  struct Call {
    store::ExpiringRows rows;
    absl::Time cutoff;
    int limit;
  };

  absl::StatusOr<bool> WithSweepLock(
      absl::FunctionRef<absl::Status(store::RetentionSweepSession&)> sweep) override {
    if (held_elsewhere) {
      return false;
    }
    absl::Status status = sweep(*this);
    if (!status.ok()) {
      return status;
    }
    return true;
  }

  absl::StatusOr<std::vector<store::TableRowEstimate>> EstimateTableRows() override {
    return std::vector<store::TableRowEstimate>{{"mentions", 42}};
  }

  absl::StatusOr<int64_t> DeleteBatch(store::ExpiringRows kind, absl::Time cutoff,
                                      int limit) override {
    calls.push_back({kind, cutoff, limit});
    if (fail) {
      return absl::UnavailableError("database gone");
    }
    std::vector<absl::Time>& times = rows[kind];
    int64_t deleted = 0;
    for (auto it = times.begin(); it != times.end() && deleted < limit;) {
      const bool expired = kind == store::ExpiringRows::kExpiredDecisions ||
                                   kind == store::ExpiringRows::kExpiredDrops
                               ? *it <= cutoff
                               : *it < cutoff;
      if (expired) {
        it = times.erase(it);
        ++deleted;
      } else {
        ++it;
      }
    }
    return deleted;
  }

  void Add(store::ExpiringRows kind, absl::Time at, int count) {
    for (int i = 0; i < count; ++i) {
      rows[kind].push_back(at);
    }
  }

  std::map<store::ExpiringRows, std::vector<absl::Time>> rows;
  std::vector<Call> calls;
  bool held_elsewhere = false;
  bool fail = false;
};

RetentionSweeperOptions Options(int batch, int max_batches) {
  RetentionSweeperOptions options;
  options.periods.failed_mentions = absl::Hours(30 * 24);
  options.periods.accepted_items = absl::Hours(7 * 24);
  options.periods.dead_letters = absl::Hours(24);
  options.batch = batch;
  options.max_batches_per_pass = max_batches;
  options.clock = [] { return kNow; };
  return options;
}

TEST(RetentionSweeperTest, EachKindIsCutOffAtItsOwnRetention) {
  FakeRetentionStore store;
  using store::ExpiringRows;
  // Just past and just within each retention.
  store.Add(ExpiringRows::kFailedMentions, kNow - absl::Hours(30 * 24) - absl::Seconds(1), 3);
  store.Add(ExpiringRows::kFailedMentions, kNow - absl::Hours(30 * 24) + absl::Seconds(1), 2);
  store.Add(ExpiringRows::kAcceptedItems, kNow - absl::Hours(7 * 24 + 1), 4);
  store.Add(ExpiringRows::kAcceptedItems, kNow - absl::Hours(6 * 24), 1);
  store.Add(ExpiringRows::kDeadLetters, kNow - absl::Hours(25), 5);
  store.Add(ExpiringRows::kDeadLetters, kNow - absl::Hours(23), 1);
  // Decisions carry their expiry: expired at now or before go.
  store.Add(ExpiringRows::kExpiredDecisions, kNow, 6);
  store.Add(ExpiringRows::kExpiredDecisions, kNow + absl::Seconds(1), 1);
  // The drop ledger: past --drop_retention (168 h here), or past the row's own keep_drops.
  store.Add(ExpiringRows::kOldDrops, kNow - absl::Hours(7 * 24) - absl::Seconds(1), 2);
  store.Add(ExpiringRows::kOldDrops, kNow - absl::Hours(7 * 24) + absl::Seconds(1), 1);
  store.Add(ExpiringRows::kExpiredDrops, kNow, 3);
  store.Add(ExpiringRows::kExpiredDrops, kNow + absl::Seconds(1), 1);
  // Deliveries that ended: past --delivery_retention (720 h).
  store.Add(ExpiringRows::kFinishedDeliveries, kNow - absl::Hours(30 * 24) - absl::Seconds(1), 2);
  store.Add(ExpiringRows::kFinishedDeliveries, kNow - absl::Hours(30 * 24) + absl::Seconds(1), 1);
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, Options(100, 100), registry);

  absl::StatusOr<SweepReport> report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ran);
  EXPECT_EQ(report->deleted["mentions"], 3);
  EXPECT_EQ(report->deleted["ingest_items"], 4);
  EXPECT_EQ(report->deleted["dead_letters"], 5);
  EXPECT_EQ(report->deleted["ingest_decisions"], 6);
  EXPECT_EQ(report->deleted["dropped_deliveries"], 5);
  EXPECT_EQ(report->deleted["deliveries"], 2);
  EXPECT_EQ(store.rows[ExpiringRows::kFinishedDeliveries].size(), 1u);
  EXPECT_EQ(store.rows[ExpiringRows::kOldDrops].size(), 1u);
  EXPECT_EQ(store.rows[ExpiringRows::kExpiredDrops].size(), 1u);
  EXPECT_EQ(store.rows[ExpiringRows::kFailedMentions].size(), 2u);
  EXPECT_EQ(store.rows[ExpiringRows::kAcceptedItems].size(), 1u);
  EXPECT_EQ(store.rows[ExpiringRows::kDeadLetters].size(), 1u);
  EXPECT_EQ(store.rows[ExpiringRows::kExpiredDecisions].size(), 1u);

  const std::string scrape = metrics::RenderText(registry);
  EXPECT_THAT(scrape,
              HasSubstr("portcullis_verifier_retention_rows_removed_total{table=\"mentions\"} 3"));
  EXPECT_THAT(
      scrape,
      HasSubstr("portcullis_verifier_retention_rows_removed_total{table=\"ingest_items\"} 4"));
  EXPECT_THAT(scrape, HasSubstr("portcullis_verifier_retention_rows_removed_total{table=\"dead_"
                                "letters\"} 5"));
  EXPECT_THAT(scrape, HasSubstr("portcullis_verifier_retention_rows_removed_total{table=\"ingest_"
                                "decisions\"} 6"));
  EXPECT_THAT(scrape, HasSubstr("portcullis_verifier_retention_rows_removed_total{table=\"dropped_"
                                "deliveries\"} 5"));
}

TEST(RetentionSweeperTest, AZeroRetentionKeepsThoseRowsForever) {
  FakeRetentionStore store;
  store.Add(store::ExpiringRows::kAcceptedItems, kNow - absl::Hours(24 * 3650), 3);
  RetentionSweeperOptions options = Options(100, 100);
  options.periods.accepted_items = absl::ZeroDuration();
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, options, registry);
  ASSERT_TRUE(sweeper.SweepOnce().ok());
  EXPECT_EQ(store.rows[store::ExpiringRows::kAcceptedItems].size(), 3u);
  for (const FakeRetentionStore::Call& call : store.calls) {
    EXPECT_NE(call.rows, store::ExpiringRows::kAcceptedItems);
  }
}

TEST(RetentionSweeperTest, DeletesInBatchesUntilOneComesBackShort) {
  FakeRetentionStore store;
  store.Add(store::ExpiringRows::kFailedMentions, kNow - absl::Hours(24 * 365), 25);
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, Options(10, 100), registry);
  absl::StatusOr<SweepReport> report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->deleted["mentions"], 25);
  int mention_batches = 0;
  for (const FakeRetentionStore::Call& call : store.calls) {
    EXPECT_EQ(call.limit, 10);
    if (call.rows == store::ExpiringRows::kFailedMentions) {
      ++mention_batches;
      EXPECT_EQ(call.cutoff, kNow - absl::Hours(30 * 24));
    }
  }
  EXPECT_EQ(mention_batches, 3);  // 10, 10, then 5 (short: done).
}

TEST(RetentionSweeperTest, APassIsBoundedOverEveryKind) {
  FakeRetentionStore store;
  store.Add(store::ExpiringRows::kFailedMentions, kNow - absl::Hours(24 * 365), 100);
  store.Add(store::ExpiringRows::kDeadLetters, kNow - absl::Hours(24 * 365), 100);
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, Options(10, 4), registry);
  absl::StatusOr<SweepReport> report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->batches, 4);
  EXPECT_EQ(store.calls.size(), 4u);
  EXPECT_EQ(report->deleted["mentions"], 40);
  // The next pass goes on where this one stopped.
  ASSERT_TRUE(sweeper.SweepOnce().ok());
  EXPECT_EQ(store.rows[store::ExpiringRows::kFailedMentions].size(), 20u);
}

TEST(RetentionSweeperTest, AnotherPodHoldingTheLockMeansNothingIsDeletedHere) {
  FakeRetentionStore store;
  store.Add(store::ExpiringRows::kFailedMentions, kNow - absl::Hours(24 * 365), 5);
  store.held_elsewhere = true;
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, Options(10, 100), registry);
  absl::StatusOr<SweepReport> report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ran);
  EXPECT_TRUE(store.calls.empty());
  EXPECT_EQ(store.rows[store::ExpiringRows::kFailedMentions].size(), 5u);
}

TEST(RetentionSweeperTest, AFailedBatchFailsThePassAndIsCounted) {
  FakeRetentionStore store;
  store.fail = true;
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, Options(10, 100), registry);
  absl::StatusOr<SweepReport> report = sweeper.SweepOnce();
  EXPECT_TRUE(absl::IsUnavailable(report.status())) << report.status();
  EXPECT_EQ(store.calls.size(), 1u);  // The pass stops at the first failure.
  EXPECT_THAT(metrics::RenderText(registry),
              HasSubstr("portcullis_verifier_retention_sweep_errors_total 1"));
}

TEST(RetentionSweeperTest, TheThreadSamplesTableRowsAndStopsWithoutWaitingForTheInterval) {
  FakeRetentionStore store;
  RetentionSweeperOptions options = Options(10, 100);
  options.interval = absl::Milliseconds(10);
  prometheus::Registry registry;
  RetentionSweeper sweeper(store, options, registry);
  EXPECT_THAT(metrics::RenderText(registry), Not(HasSubstr("portcullis_verifier_table_rows{")));
  sweeper.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline &&
         metrics::RenderText(registry).find(
             "portcullis_verifier_table_rows{table=\"mentions\"} 42") == std::string::npos) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_THAT(metrics::RenderText(registry),
              HasSubstr("portcullis_verifier_table_rows{table=\"mentions\"} 42"));
  RetentionSweeperOptions slow = Options(10, 100);
  slow.interval = absl::Hours(1);
  prometheus::Registry idle_registry;
  RetentionSweeper idle(store, slow, idle_registry);
  idle.Start();
  const absl::Time before = absl::Now();
  idle.Stop();
  sweeper.Stop();
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
}

}  // namespace
}  // namespace portcullis::verifier::lifecycle
