#include "verifier-service/src/store/mention_writer.h"

#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/store/served_site_fixture.h"

namespace portcullis::verifier::store {
namespace {

// Every answer of a writer, as they come.
class Answers {
 public:
  MentionSubmitter::Done Collect() {
    return [this](absl::StatusOr<SubmitResult> result) {
      absl::MutexLock lock(&mu_);
      results_.push_back(std::move(result));
    };
  }
  // All `n` answers; fails the test after 60 s.
  std::vector<absl::StatusOr<SubmitResult>> Wait(size_t n) {
    absl::MutexLock lock(&mu_);
    const auto done = [&] { return results_.size() >= n; };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(60)))
        << results_.size() << " of " << n << " answered";
    return results_;
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::StatusOr<SubmitResult>> results_;
};

class VerifierMentionWriterTest : public ServedSiteStoreTest {
 protected:
  std::unique_ptr<MentionWriter> StartWriter(const std::string& url) {
    MentionWriterOptions options;
    options.connection = {url, 1, absl::Seconds(2), absl::Seconds(5)};
    absl::StatusOr<std::unique_ptr<MentionWriter>> writer =
        MentionWriter::Start(*store_, options);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? *std::move(writer) : nullptr;
  }
};

TEST_F(VerifierMentionWriterTest, ABurstIsWrittenInFewBatchesAndEverySubmissionGetsItsRow) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<MentionWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  constexpr int kSubmissions = 2000;
  Answers answers;
  for (int i = 0; i < kSubmissions; ++i) {
    writer->Submit(Mention("https://s" + std::to_string(i) + ".example/"), answers.Collect());
  }
  const std::vector<absl::StatusOr<SubmitResult>> results = answers.Wait(kSubmissions);
  std::set<std::string> ids;
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->created);
    EXPECT_TRUE(result->queued);
    ids.insert(result->mention_id);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kSubmissions));
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), kSubmissions);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), kSubmissions);
  EXPECT_EQ(writer->submissions(), kSubmissions);
  EXPECT_LT(writer->batches(), kSubmissions / 4)
      << "submissions queued while a batch commits go together: " << writer->batches()
      << " batches";
}

TEST_F(VerifierMentionWriterTest, ThePairSubmittedManyTimesAtOnceIsOneRowWithOneCreator) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<MentionWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  constexpr int kCopies = 300;
  Answers answers;
  for (int i = 0; i < kCopies; ++i) {
    writer->Submit(Mention("https://a.example/"), answers.Collect());
  }
  int created = 0;
  std::set<std::string> ids;
  for (const auto& result : answers.Wait(kCopies)) {
    ASSERT_TRUE(result.ok()) << result.status();
    created += result->created ? 1 : 0;
    ids.insert(result->mention_id);
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 1);
}

TEST_F(VerifierMentionWriterTest, AnErrorOfOneSubmissionFailsOnlyThatOne) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<MentionWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  // PostgreSQL refuses text that is not UTF-8: an error of this submission, not of the database.
  NewMention bad = Mention("https://bad.example/\xff");
  Answers answers;
  constexpr int kSubmissions = 200;
  for (int i = 0; i < kSubmissions; ++i) {
    writer->Submit(i == kSubmissions / 2 ? bad : Mention("https://s" + std::to_string(i) + ".example/"),
                   answers.Collect());
  }
  int failed = 0;
  for (const auto& result : answers.Wait(kSubmissions)) {
    if (!result.ok()) {
      ++failed;
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInternal) << result.status();
      EXPECT_EQ(result.status().message().find("bad.example"), absl::string_view::npos)
          << "no SQL or value in the message: " << result.status();
    }
  }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), kSubmissions - 1);
}

TEST_F(VerifierMentionWriterTest, ADatabaseThatCannotAnswerFailsTheBatchRetryably) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  // Port 1 on loopback: nothing listens.
  std::unique_ptr<MentionWriter> writer =
      StartWriter("postgresql://127.0.0.1:1/none?connect_timeout=2");
  ASSERT_NE(writer, nullptr);
  Answers answers;
  for (int i = 0; i < 10; ++i) {
    writer->Submit(Mention("https://s" + std::to_string(i) + ".example/"), answers.Collect());
  }
  for (const auto& result : answers.Wait(10)) {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  }
}

TEST_F(VerifierMentionWriterTest, AFullQueueIsRefusedAtOnce) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  MentionWriterOptions options;
  options.writers = 1;
  options.max_queued = 2;
  options.connection = {db->connection_string(), 1, absl::Seconds(2), absl::Seconds(30)};
  std::unique_ptr<MentionWriter> writer = *MentionWriter::Start(*store_, options);
  // The one writer's batch waits for this lock, so what comes next stays queued.
  pqxx::connection holder(db->connection_string());
  pqxx::work lock(holder);
  lock.exec0("LOCK TABLE mentions IN ACCESS EXCLUSIVE MODE");
  Answers answers;
  writer->Submit(Mention("https://s0.example/"), answers.Collect());
  while (Count("SELECT count(*) FROM pg_locks WHERE NOT granted") == 0) {
    absl::SleepFor(absl::Milliseconds(10));  // Until the writer's batch waits for the lock.
  }
  writer->Submit(Mention("https://s1.example/"), answers.Collect());
  writer->Submit(Mention("https://s2.example/"), answers.Collect());
  writer->Submit(Mention("https://s3.example/"), answers.Collect());
  const auto refused = answers.Wait(1);
  EXPECT_EQ(refused[0].status().code(), absl::StatusCode::kUnavailable) << refused[0].status();
  EXPECT_EQ(refused[0].status().message(), "verifier overloaded, retry later");
  lock.abort();
  int accepted = 0;
  for (const auto& result : answers.Wait(4)) {
    accepted += result.ok() ? 1 : 0;
  }
  EXPECT_EQ(accepted, 3) << "the one in the batch and the two queued";
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 3);
}

TEST_F(VerifierMentionWriterTest, StopWritesWhatIsQueuedAndThenRefuses) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::unique_ptr<MentionWriter> writer = StartWriter(db->connection_string());
  ASSERT_NE(writer, nullptr);
  Answers answers;
  constexpr int kSubmissions = 500;
  for (int i = 0; i < kSubmissions; ++i) {
    writer->Submit(Mention("https://s" + std::to_string(i) + ".example/"), answers.Collect());
  }
  writer->Stop();
  for (const auto& result : answers.Wait(kSubmissions)) {
    EXPECT_TRUE(result.ok()) << result.status();
  }
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), kSubmissions) << "nothing queued is lost";
  Answers late;
  writer->Submit(Mention("https://late.example/"), late.Collect());
  const auto refused = late.Wait(1);
  EXPECT_EQ(refused[0].status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(VerifierMentionWriterTest, SubmitAllQueuesACallsItemsTogetherAndAnswersEach) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  MentionWriterOptions options;
  options.writers = 1;
  options.connection = {db->connection_string(), 1, absl::Seconds(2), absl::Seconds(30)};
  std::unique_ptr<MentionWriter> writer = *MentionWriter::Start(*store_, options);
  // The writer's first batch waits for this lock, so the call's 200 items queue behind it.
  pqxx::connection holder(db->connection_string());
  pqxx::work lock(holder);
  lock.exec0("LOCK TABLE mentions IN ACCESS EXCLUSIVE MODE");
  Answers answers;
  writer->Submit(Mention("https://first.example/"), answers.Collect());
  while (Count("SELECT count(*) FROM pg_locks WHERE NOT granted") == 0) {
    absl::SleepFor(absl::Milliseconds(10));  // Until the writer's batch waits for the lock.
  }
  constexpr int kItems = 200;
  std::vector<MentionSubmitter::Submission> call;
  for (int i = 0; i < kItems; ++i) {
    // Every tenth item repeats the one before it: the same row, answered as a repeat.
    const int source = i % 10 == 9 ? i - 1 : i;
    call.push_back({Mention("https://s" + std::to_string(source) + ".example/"),
                    answers.Collect()});
  }
  writer->SubmitAll(std::move(call));
  lock.abort();
  const std::vector<absl::StatusOr<SubmitResult>> results = answers.Wait(kItems + 1);
  int created = 0;
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    created += result->created ? 1 : 0;
  }
  EXPECT_EQ(created, 1 + kItems - kItems / 10);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 1 + kItems - kItems / 10);
  EXPECT_EQ(writer->batches(), 2) << "the call's items went into the writer's next batch together";
}

TEST_F(VerifierMentionWriterTest, SubmitAllOnAFullQueueRefusesEveryItemOfTheCall) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  MentionWriterOptions options;
  options.writers = 1;
  options.max_queued = 1;
  options.connection = {db->connection_string(), 1, absl::Seconds(2), absl::Seconds(30)};
  std::unique_ptr<MentionWriter> writer = *MentionWriter::Start(*store_, options);
  pqxx::connection holder(db->connection_string());
  pqxx::work lock(holder);
  lock.exec0("LOCK TABLE mentions IN ACCESS EXCLUSIVE MODE");
  Answers answers;
  writer->Submit(Mention("https://s0.example/"), answers.Collect());
  while (Count("SELECT count(*) FROM pg_locks WHERE NOT granted") == 0) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  writer->Submit(Mention("https://s1.example/"), answers.Collect());  // Fills the queue.
  Answers refused;
  std::vector<MentionSubmitter::Submission> call;
  for (int i = 2; i < 5; ++i) {
    call.push_back({Mention("https://s" + std::to_string(i) + ".example/"), refused.Collect()});
  }
  writer->SubmitAll(std::move(call));
  for (const auto& result : refused.Wait(3)) {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  }
  lock.abort();
  for (const auto& result : answers.Wait(2)) {
    EXPECT_TRUE(result.ok()) << result.status();
  }
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 2) << "nothing of the refused call stored";
}

}  // namespace
}  // namespace portcullis::verifier::store
