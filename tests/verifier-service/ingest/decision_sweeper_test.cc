#include "verifier-service/src/ingest/decision_sweeper.h"

#include <vector>

#include "gtest/gtest.h"

namespace portcullis::verifier::ingest {
namespace {

// Holds `expired` expired rows; SweepExpired deletes up to `limit` of them.
class CountingStore final : public store::IngestStore {
 public:
  absl::StatusOr<std::optional<store::DecisionRecord>> FindDecision(const std::string&,
                                                                    const std::string&,
                                                                    absl::Time) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<store::RecordResult> Record(const store::NewDecision&, absl::Time) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<int64_t> SweepExpired(absl::Time now, int limit) override {
    sweeps.push_back(now);
    if (!fail.ok()) {
      return fail;
    }
    const int64_t deleted = std::min<int64_t>(expired, limit);
    expired -= deleted;
    return deleted;
  }
  absl::StatusOr<std::vector<store::DeadLetterRecord>> ListDeadLetters(
      const std::string&, const std::optional<store::DeadLetterPosition>&, int) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<std::optional<store::DeadLetterRecord>> GetDeadLetter(
      const std::string&) override {
    return absl::UnimplementedError("fake");
  }
  absl::Status DiscardDeadLetter(const std::string&) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<std::vector<store::AcceptedItemRecord>> ListAcceptedItems(int64_t,
                                                                           int) override {
    return absl::UnimplementedError("fake");
  }

  int64_t expired = 0;
  absl::Status fail;
  std::vector<absl::Time> sweeps;
};

DecisionSweeperOptions Options(int batch, int max_batches) {
  DecisionSweeperOptions options;
  options.batch = batch;
  options.max_batches_per_pass = max_batches;
  options.clock = [] { return absl::FromUnixSeconds(1'700'000'000); };
  return options;
}

TEST(DecisionSweeperTest, DeletesInBatchesUntilOneComesBackShort) {
  CountingStore store;
  store.expired = 25;
  DecisionSweeper sweeper(store, Options(10, 100));
  absl::StatusOr<int64_t> deleted = sweeper.SweepOnce();
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 25);
  EXPECT_EQ(store.sweeps.size(), 3u);
  EXPECT_EQ(store.sweeps[0], absl::FromUnixSeconds(1'700'000'000));
}

TEST(DecisionSweeperTest, APassIsBounded) {
  CountingStore store;
  store.expired = 1000;
  DecisionSweeper sweeper(store, Options(10, 5));
  EXPECT_EQ(*sweeper.SweepOnce(), 50);
  EXPECT_EQ(store.expired, 950);
}

TEST(DecisionSweeperTest, FailuresAreReturned) {
  CountingStore store;
  store.fail = absl::UnavailableError("down");
  DecisionSweeper sweeper(store, Options(10, 5));
  EXPECT_TRUE(absl::IsUnavailable(sweeper.SweepOnce().status()));
}

TEST(DecisionSweeperTest, StopEndsTheThreadWithoutWaitingForTheInterval) {
  CountingStore store;
  DecisionSweeperOptions options = Options(10, 5);
  options.interval = absl::Hours(1);
  DecisionSweeper sweeper(store, options);
  sweeper.Start();
  const absl::Time start = absl::Now();
  sweeper.Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(store.sweeps.empty());
}

}  // namespace
}  // namespace portcullis::verifier::ingest
