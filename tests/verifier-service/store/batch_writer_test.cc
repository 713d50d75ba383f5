#include "verifier-service/src/store/batch_writer.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/store/writer_answers.h"

namespace portcullis::verifier::store {
namespace {

// The template's own contract with a statement of its own: each item n is answered 100 / n,
// computed by PostgreSQL in one transaction per batch (n = 0 fails there: a division by zero).
using DivisionWriter = BatchWriter<int, int>;

DivisionWriter::Results Divide(pqxx::connection& connection, absl::Span<const int> batch) {
  pqxx::work transaction(connection);
  DivisionWriter::Results results;
  for (const int n : batch) {
    results.push_back(transaction.exec_params1("SELECT 100 / $1::int", n)[0].as<int>());
  }
  transaction.commit();
  return results;
}

using DivisionAnswers = testing::WriterAnswers<int>;

BatchWriterOptions Options(const std::string& url, int max_queued = 4096) {
  BatchWriterOptions options;
  options.writers = 1;
  options.max_queued = max_queued;
  options.connection = {url, 1, absl::Seconds(2), absl::Seconds(30)};
  return options;
}

TEST(VerifierBatchWriterTest, OptionsThatCannotWriteAreRefused) {
  BatchWriterOptions options;
  options.max_batch = 0;
  EXPECT_EQ(DivisionWriter::Start("divide", Divide, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VerifierBatchWriterTest, EachItemGetsItsOwnAnswerAndOnlyTheBadOneFails) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  absl::StatusOr<std::unique_ptr<DivisionWriter>> writer =
      DivisionWriter::Start("divide", Divide, Options(db->connection_string()));
  ASSERT_TRUE(writer.ok()) << writer.status();
  DivisionAnswers answers;
  std::vector<DivisionWriter::Queued> items;
  for (int n = 0; n <= 50; ++n) {
    items.push_back({n, answers.Collect(n)});
  }
  (*writer)->SubmitAll(std::move(items));
  for (const auto& [n, result] : answers.Wait(51)) {
    if (n == 0) {
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
    } else {
      ASSERT_TRUE(result.ok()) << n << ": " << result.status();
      EXPECT_EQ(*result, 100 / n);
    }
  }
  EXPECT_EQ((*writer)->items(), 51);
}

TEST(VerifierBatchWriterTest, AFullQueueIsRefusedAtOnceAndSubmitAllIsAllOrNone) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  // The first batch waits until the test lets it go, so what comes next stays queued.
  absl::Notification first_batch_started;
  absl::Notification release;
  auto write = [&](pqxx::connection& connection, absl::Span<const int> batch) {
    if (!first_batch_started.HasBeenNotified()) {
      first_batch_started.Notify();
      release.WaitForNotification();
    }
    return Divide(connection, batch);
  };
  absl::StatusOr<std::unique_ptr<DivisionWriter>> writer =
      DivisionWriter::Start("divide", write, Options(db->connection_string(), /*max_queued=*/3));
  ASSERT_TRUE(writer.ok()) << writer.status();
  DivisionAnswers answers;
  (*writer)->Submit(1, answers.Collect(1));
  ASSERT_TRUE(first_batch_started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  for (int n = 2; n <= 4; ++n) {
    (*writer)->Submit(n, answers.Collect(n));
  }
  (*writer)->Submit(5, answers.Collect(5));  // the queue holds 3: refused at once
  std::vector<DivisionWriter::Queued> more;
  more.push_back({6, answers.Collect(6)});
  more.push_back({7, answers.Collect(7)});
  (*writer)->SubmitAll(std::move(more));  // refused together
  const auto refused = answers.Wait(3);
  for (const auto& [n, result] : refused) {
    EXPECT_TRUE(n == 5 || n == 6 || n == 7) << n;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << n;
  }
  release.Notify();
  const auto all = answers.Wait(7);
  for (const auto& [n, result] : all) {
    if (n <= 4) {
      ASSERT_TRUE(result.ok()) << n << ": " << result.status();
      EXPECT_EQ(*result, 100 / n);
    }
  }
  (*writer)->Stop();
  DivisionAnswers late;
  (*writer)->Submit(8, late.Collect(8));
  EXPECT_EQ(late.Wait(1)[0].second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace portcullis::verifier::store
