#include "verifier-service/src/store/ingest_writer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/store/writer_answers.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

const absl::Time kWriterNow = absl::FromUnixSeconds(1'700'000'000);

// A decision on the item numbered `n` of `publisher`.
NewDecision WriterDecision(const std::string& publisher, int n, StoredDecision decision,
                           bool signature_valid) {
  std::string hash = absl::StrCat(n);
  hash = std::string(64 - hash.size(), '0') + hash;
  NewDecision next;
  next.decision.publisher = publisher;
  next.decision.content_hash = hash;
  next.decision.item_id = absl::StrCat("item-", n);
  next.decision.decision = decision;
  next.decision.reason =
      decision == StoredDecision::kDropped ? "unverified_synthetic_content" : "";
  next.decision.signature_valid = signature_valid;
  next.decision.decided_at = kWriterNow;
  next.decision.expires_at = kWriterNow + absl::Hours(1);
  next.delivery.publisher = publisher;
  next.delivery.item_id = next.decision.item_id;
  next.delivery.content_hash = hash;
  next.delivery.raw_body = "{\"id\":\"x\"}";
  next.delivery.canonical_body = "{\"id\":\"x\"}";
  return next;
}

using WriterAnswers = testing::WriterAnswers<RecordResult>;

class VerifierIngestWriterTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    url_ = url;
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    pool_ = *PgConnectionPool::Create({url, 2, absl::Seconds(5), absl::Seconds(5)});
    store_ = std::make_unique<PgIngestStore>(*pool_);
  }

  std::unique_ptr<IngestWriter> StartWriter(const std::string& url, int writers = 2) {
    IngestWriterOptions options;
    options.writers = writers;
    options.connection = {url, 1, absl::Seconds(2), absl::Seconds(30)};
    absl::StatusOr<std::unique_ptr<IngestWriter>> writer = IngestWriter::Start(*store_, options);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? *std::move(writer) : nullptr;
  }

  int64_t Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<int64_t>();
  }

  std::string url_;
  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgIngestStore> store_;
};

TEST_F(VerifierIngestWriterTest, ABurstIsWrittenInFewBatchesAndEveryDecisionIsAnswered) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<IngestWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  constexpr int kDecisions = 1000;
  WriterAnswers answers;
  for (int i = 0; i < kDecisions; ++i) {
    writer->Record(WriterDecision("feed", i, StoredDecision::kAccepted, false), kWriterNow,
                   answers.Collect(i));
  }
  for (const auto& [tag, result] : answers.Wait(kDecisions)) {
    ASSERT_TRUE(result.ok()) << tag << ": " << result.status();
    EXPECT_TRUE(result->recorded) << tag;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), kDecisions);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), kDecisions);
  EXPECT_EQ(writer->decisions(), kDecisions);
  EXPECT_LT(writer->batches(), kDecisions / 4)
      << "decisions queued while a batch commits go together: " << writer->batches();
}

TEST_F(VerifierIngestWriterTest, CopiesOfOneItemInOneBatchAreDecidedAsIfTheyCameOneByOne) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<IngestWriter> writer = StartWriter(db->connection_string(), /*writers=*/1);
  ASSERT_NE(writer, nullptr);
  // The writer's first batch waits for this lock, so what comes next forms one batch.
  pqxx::connection holder(db->connection_string());
  pqxx::work lock(holder);
  lock.exec0("LOCK TABLE ingest_decisions IN ACCESS EXCLUSIVE MODE");
  WriterAnswers answers;
  writer->Record(WriterDecision("feed", 1000, StoredDecision::kAccepted, false), kWriterNow,
                 answers.Collect(0));
  while (Count("SELECT count(*) FROM pg_locks WHERE NOT granted") == 0) {
    absl::SleepFor(absl::Milliseconds(10));  // Until the writer's batch waits for the lock.
  }
  // Item 7, four times: an unsigned drop; an unsigned copy (its duplicate); a validly signed
  // copy (replaces the unsigned drop); an unsigned copy again (a duplicate of the signed one).
  // Item 8 between them, accepted.
  writer->Record(WriterDecision("feed", 7, StoredDecision::kDropped, false), kWriterNow,
                 answers.Collect(1));
  writer->Record(WriterDecision("feed", 7, StoredDecision::kDropped, false), kWriterNow,
                 answers.Collect(2));
  writer->Record(WriterDecision("feed", 8, StoredDecision::kAccepted, false), kWriterNow,
                 answers.Collect(3));
  writer->Record(WriterDecision("feed", 7, StoredDecision::kAccepted, true), kWriterNow,
                 answers.Collect(4));
  writer->Record(WriterDecision("feed", 7, StoredDecision::kDropped, false), kWriterNow,
                 answers.Collect(5));
  lock.abort();
  const auto results = answers.Wait(6);
  for (const auto& [tag, result] : results) {
    ASSERT_TRUE(result.ok()) << tag << ": " << result.status();
  }
  EXPECT_TRUE(results[1].second->recorded);
  EXPECT_FALSE(results[2].second->recorded) << "a duplicate of the unsigned drop";
  EXPECT_EQ(results[2].second->decision.decision, StoredDecision::kDropped);
  EXPECT_TRUE(results[3].second->recorded);
  EXPECT_TRUE(results[4].second->recorded)
      << "an unsigned copy does not suppress a later validly signed one, also in one batch";
  EXPECT_FALSE(results[5].second->recorded);
  EXPECT_EQ(results[5].second->decision.decision, StoredDecision::kAccepted);
  EXPECT_TRUE(results[5].second->decision.signature_valid);
  EXPECT_EQ(writer->batches(), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items WHERE item_id = 'item-7' AND signature_valid"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 3);
}

TEST_F(VerifierIngestWriterTest, AnErrorOfOneDecisionFailsOnlyThatOne) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<IngestWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  constexpr int kDecisions = 200;
  WriterAnswers answers;
  for (int i = 0; i < kDecisions; ++i) {
    NewDecision next = WriterDecision("feed", i, StoredDecision::kAccepted, false);
    if (i == kDecisions / 2) {
      // PostgreSQL refuses text that is not UTF-8: an error of this decision, not the database's.
      next.decision.item_id = "bad-\xff";
    }
    writer->Record(std::move(next), kWriterNow, answers.Collect(i));
  }
  int failed = 0;
  for (const auto& [tag, result] : answers.Wait(kDecisions)) {
    if (!result.ok()) {
      ++failed;
      EXPECT_EQ(tag, kDecisions / 2);
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
      EXPECT_EQ(result.status().message().find("bad-"), absl::string_view::npos)
          << "no SQL or value in the message: " << result.status();
    }
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), kDecisions - 1);
}

TEST_F(VerifierIngestWriterTest, ADatabaseThatCannotAnswerFailsTheBatchRetryably) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  // Port 1 on loopback: nothing listens.
  std::unique_ptr<IngestWriter> writer =
      StartWriter("postgresql://127.0.0.1:1/none?connect_timeout=2");
  ASSERT_NE(writer, nullptr);
  WriterAnswers answers;
  for (int i = 0; i < 10; ++i) {
    writer->Record(WriterDecision("feed", i, StoredDecision::kAccepted, false), kWriterNow,
                   answers.Collect(i));
  }
  for (const auto& [tag, result] : answers.Wait(10)) {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << tag << result.status();
  }
}

TEST_F(VerifierIngestWriterTest, StopWritesWhatIsQueuedAndThenRefuses) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<IngestWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  WriterAnswers answers;
  constexpr int kDecisions = 300;
  for (int i = 0; i < kDecisions; ++i) {
    writer->Record(WriterDecision("feed", i, StoredDecision::kAccepted, false), kWriterNow,
                   answers.Collect(i));
  }
  writer->Stop();
  for (const auto& [tag, result] : answers.Wait(kDecisions)) {
    EXPECT_TRUE(result.ok()) << tag << result.status();
  }
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), kDecisions) << "nothing queued is lost";
  WriterAnswers late;
  writer->Record(WriterDecision("feed", 9999, StoredDecision::kAccepted, false), kWriterNow,
                 late.Collect(0));
  EXPECT_EQ(late.Wait(1)[0].second.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace portcullis::verifier::store
