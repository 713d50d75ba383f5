// The worker against a real PostgreSQL queue with a scripted MentionVerifier.
#include "verifier-service/src/queue/verification_worker.h"

#include <map>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_job_listener.h"
#include "verifier-service/src/store/pg_job_store.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::queue {
namespace {

// Answers by source URL from a script; counts calls per mention.
class ScriptedVerifier final : public MentionVerifier {
 public:
  explicit ScriptedVerifier(std::map<std::string, VerificationOutcome> script)
      : script_(std::move(script)) {}

  VerificationOutcome Verify(const store::JobRecord& job) override {
    absl::MutexLock lock(&mu_);
    ++calls_[job.mention_id];
    auto it = script_.find(job.source);
    return it == script_.end() ? VerificationOutcome::Verified() : it->second;
  }

  int calls(const std::string& mention_id) {
    absl::MutexLock lock(&mu_);
    return calls_[mention_id];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, VerificationOutcome> script_;
  std::map<std::string, int> calls_;
};

class VerifierWorkerTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    absl::StatusOr<std::vector<store::Migration>> migrations = store::BuiltinMigrations();
    ASSERT_TRUE(migrations.ok());
    ASSERT_TRUE(store::Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<store::PgConnectionPool>> pool =
        store::PgConnectionPool::Create({url, 4, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok());
    pool_ = *std::move(pool);
    mentions_ = std::make_unique<store::PgMentionStore>(*pool_);
    jobs_ = std::make_unique<store::PgJobStore>(*pool_);
    listener_ = std::make_unique<store::PgJobListener>(url);
    store::PgSiteStore sites(*pool_);
    ASSERT_TRUE(sites.AddSite("b.example").ok());
    const intake::TargetRule all{"https://b.example/", intake::TargetKind::kPrefix, "b.example"};
    ASSERT_TRUE(sites.AddTargets({all}).ok());
    url_ = url;
  }

  std::string Submit(const std::string& source) {
    const std::string target = "https://b.example/";
    absl::StatusOr<store::SubmitResult> result = mentions_->Submit(
        {source, target, crypto::Sha256(source), crypto::Sha256(target), "b.example", target});
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->mention_id : "";
  }

  std::string StateOf(const std::string& id) {
    absl::StatusOr<store::StoredMention> mention = mentions_->Get(id);
    if (!mention.ok()) {
      return "?";
    }
    switch (mention->state) {
      case store::MentionState::kPending:
        return "PENDING";
      case store::MentionState::kVerified:
        return "VERIFIED";
      case store::MentionState::kFailed:
        return "FAILED " + mention->reason;
    }
    return "?";
  }

  // Polls until `id` reads `state` (no sleeping for time to pass: the worker is woken by NOTIFY).
  bool WaitForState(const std::string& id, const std::string& state) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      if (StateOf(id) == state) {
        return true;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  long long Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<long long>();
  }

  WorkerOptions Options() {
    WorkerOptions options;
    options.owner = MakeWorkerOwner();
    options.concurrency = 2;
    options.lease = absl::Seconds(10);
    options.poll_interval = absl::Seconds(30);  // Longer than the test: NOTIFY must wake it.
    options.retry = {absl::Milliseconds(20), absl::Milliseconds(40), 3};
    return options;
  }

  std::string url_;
  std::unique_ptr<store::PgConnectionPool> pool_;
  std::unique_ptr<store::PgMentionStore> mentions_;
  std::unique_ptr<store::PgJobStore> jobs_;
  std::unique_ptr<store::PgJobListener> listener_;
};

TEST_F(VerifierWorkerTest, RecordsEachOutcomeAndEmptiesTheQueue) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ScriptedVerifier verifier({
      {"https://a.example/no-link", VerificationOutcome::Failed("no_link")},
      {"https://a.example/down", VerificationOutcome::Retry("timeout")},
  });
  VerificationWorker worker(*jobs_, *listener_, verifier, Options());
  worker.Start();
  const std::string good = Submit("https://a.example/good");
  const std::string no_link = Submit("https://a.example/no-link");
  const std::string down = Submit("https://a.example/down");
  EXPECT_TRUE(WaitForState(good, "VERIFIED")) << StateOf(good);
  EXPECT_TRUE(WaitForState(no_link, "FAILED no_link")) << StateOf(no_link);
  // Transient failures are retried with backoff, then FAILED unreachable after 3 attempts.
  EXPECT_TRUE(WaitForState(down, "FAILED unreachable")) << StateOf(down);
  EXPECT_EQ(verifier.calls(down), 3);
  EXPECT_EQ(verifier.calls(good), 1);
  worker.Stop();
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
}

TEST_F(VerifierWorkerTest, TransientFailureNeverUndoesAVerifiedMention) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string id = Submit("https://a.example/flaky");
  {
    ScriptedVerifier verifier({});
    VerificationWorker worker(*jobs_, *listener_, verifier, Options());
    worker.Start();
    ASSERT_TRUE(WaitForState(id, "VERIFIED"));
  }
  // Re-verification keeps failing transiently: the mention stays VERIFIED, the job goes.
  ScriptedVerifier verifier({{"https://a.example/flaky", VerificationOutcome::Retry("timeout")}});
  VerificationWorker worker(*jobs_, *listener_, verifier, Options());
  worker.Start();
  Submit("https://a.example/flaky");
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (verifier.calls(id) < 3 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  while (Count("SELECT count(*) FROM verification_jobs") > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  worker.Stop();
  EXPECT_EQ(verifier.calls(id), 3);
  EXPECT_EQ(StateOf(id), "VERIFIED");
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
}

TEST_F(VerifierWorkerTest, LostLeaseWritesNothing) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string id = Submit("https://a.example/x");
  absl::StatusOr<std::vector<store::JobRecord>> first =
      jobs_->Claim("first", 10, absl::Milliseconds(1));
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].attempts, 1);
  absl::SleepFor(absl::Milliseconds(20));  // The 1 ms lease runs out.
  absl::StatusOr<std::vector<store::JobRecord>> second =
      jobs_->Claim("second", 10, absl::Seconds(30));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u) << "an expired lease is due again";
  EXPECT_EQ((*second)[0].attempts, 2);
  EXPECT_TRUE(jobs_->Claim("third", 10, absl::Seconds(30))->empty()) << "a live lease is not";

  store::JobResult failed{store::JobResult::Kind::kFailed, "no_link"};
  EXPECT_TRUE(absl::IsFailedPrecondition(jobs_->Finish((*first)[0].job_id, "first", failed)));
  EXPECT_EQ(StateOf(id), "PENDING");
  EXPECT_TRUE(jobs_->Finish((*second)[0].job_id, "second", store::JobResult{}).ok());
  EXPECT_EQ(StateOf(id), "VERIFIED");
  EXPECT_FALSE(jobs_->NextDueIn()->has_value());
}

TEST_F(VerifierWorkerTest, RenewalExtendsOnlyTheListedLeasesOfTheOwner) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  Submit("https://a.example/1");
  Submit("https://a.example/2");
  absl::StatusOr<std::vector<store::JobRecord>> claimed = jobs_->Claim("me", 10, absl::Seconds(5));
  ASSERT_TRUE(claimed.ok());
  ASSERT_EQ(claimed->size(), 2u);
  const int64_t kept = (*claimed)[0].job_id;
  EXPECT_EQ(*jobs_->RenewLeases("me", {kept}, absl::Hours(1)), 1);
  EXPECT_EQ(*jobs_->RenewLeases("someone else", {kept}, absl::Hours(1)), 0);
  EXPECT_EQ(*jobs_->RenewLeases("me", {}, absl::Hours(1)), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs "
                  "WHERE lease_expires_at > now() + interval '30 minutes'"),
            1);
  EXPECT_TRUE(jobs_->ReleaseAll("me").ok());
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs WHERE lease_owner IS NULL"), 2);
}

}  // namespace
}  // namespace portcullis::verifier::queue
