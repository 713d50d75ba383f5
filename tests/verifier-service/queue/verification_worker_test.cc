// The worker against a real PostgreSQL queue with a scripted MentionVerifier.
#include "verifier-service/src/queue/verification_worker.h"

#include <map>
#include <thread>
#include <vector>

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

// Event-driven: a source with "slow" in it is parked (holding no thread) until Release();
// any other is verified at once.
class ParkingVerifier final : public MentionVerifier {
 public:
  VerificationOutcome Verify(const store::JobRecord&) override {
    return VerificationOutcome::Verified();
  }
  void VerifyAsync(const store::JobRecord& job, Done done) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    if (job.source.find("slow") == std::string::npos) {
      mu_.Unlock();
      std::move(done)(VerificationOutcome::Verified());
      mu_.Lock();
      return;
    }
    parked_.push_back(std::move(done));
    max_parked_ = std::max(max_parked_, static_cast<int>(parked_.size()));
  }
  // Verifies every parked job.
  void Release() {
    std::vector<Done> parked;
    {
      absl::MutexLock lock(&mu_);
      parked.swap(parked_);
    }
    for (Done& done : parked) {
      std::move(done)(VerificationOutcome::Verified());
    }
  }
  bool WaitForParked(int n) {
    absl::MutexLock lock(&mu_);
    const auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return static_cast<int>(parked_.size()) >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(20));
  }
  int parked() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(parked_.size());
  }
  int max_parked() {
    absl::MutexLock lock(&mu_);
    return max_parked_;
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::vector<Done> parked_ ABSL_GUARDED_BY(mu_);
  int max_parked_ ABSL_GUARDED_BY(mu_) = 0;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
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
    ASSERT_TRUE(sites.AddSite("b.example", {}).ok());
    const store::TargetRule all{"https://b.example/", store::TargetKind::kPrefix, "b.example"};
    ASSERT_TRUE(sites.AddTargets({all}, {}).ok());
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
    absl::StatusOr<store::StoredMention> mention = mentions_->Get(id, {});
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

TEST_F(VerifierWorkerTest, ManySlowVerificationsInFlightDoNotDelayAFastOne) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ParkingVerifier verifier;
  WorkerOptions options = Options();  // 2 threads ...
  options.max_in_flight = 100;        // ... and 100 verifications in flight.
  VerificationWorker worker(*jobs_, *listener_, verifier, options);
  worker.Start();
  std::vector<std::string> slow;
  for (int i = 0; i < 50; ++i) {
    slow.push_back(Submit("https://a.example/slow-" + std::to_string(i)));
  }
  ASSERT_TRUE(verifier.WaitForParked(50)) << verifier.parked();
  EXPECT_EQ(worker.in_flight(), 50);
  const absl::Time submitted = absl::Now();
  const std::string fast = Submit("https://a.example/fast");
  EXPECT_TRUE(WaitForState(fast, "VERIFIED")) << StateOf(fast);
  EXPECT_LT(absl::Now() - submitted, absl::Seconds(5));
  EXPECT_EQ(verifier.parked(), 50);  // Still waiting on their sources.
  EXPECT_EQ(StateOf(slow[0]), "PENDING");
  verifier.Release();
  for (const std::string& id : slow) {
    EXPECT_TRUE(WaitForState(id, "VERIFIED")) << StateOf(id);
  }
  worker.Stop();
  EXPECT_EQ(worker.finished(), 51);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
}

TEST_F(VerifierWorkerTest, InFlightVerificationsAreCappedAndTheRestWaitInTheQueue) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ParkingVerifier verifier;
  WorkerOptions options = Options();
  options.max_in_flight = 5;
  VerificationWorker worker(*jobs_, *listener_, verifier, options);
  worker.Start();
  for (int i = 0; i < 12; ++i) {
    Submit("https://a.example/slow-" + std::to_string(i));
  }
  ASSERT_TRUE(verifier.WaitForParked(5));
  absl::SleepFor(absl::Milliseconds(300));  // Room for a wrong claim to happen.
  EXPECT_EQ(verifier.parked(), 5);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs WHERE lease_owner IS NOT NULL"), 5);
  for (int round = 0; round < 3; ++round) {
    verifier.Release();
    if (round < 2) {
      ASSERT_TRUE(verifier.WaitForParked(round == 0 ? 5 : 2));
    }
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (Count("SELECT count(*) FROM verification_jobs") > 0 && absl::Now() < deadline) {
    verifier.Release();
    absl::SleepFor(absl::Milliseconds(20));
  }
  worker.Stop();
  EXPECT_EQ(verifier.max_parked(), 5);
  EXPECT_EQ(worker.finished(), 12);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'"), 12);
}

// A backlog larger than the in-flight cap, released in waves: outcomes that arrive together are
// recorded together (one recorder thread, batches of up to 16) and claims wait for a batch of
// free slots; every mention is still verified exactly once and the cap holds.
TEST_F(VerifierWorkerTest, ABacklogIsRecordedInBatchesExactlyOnce) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ParkingVerifier verifier;
  WorkerOptions options = Options();
  options.max_in_flight = 40;
  options.recorders = 1;
  options.finish_batch = 16;
  options.claim_batch = 10;
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) {
    ids.push_back(Submit("https://a.example/slow-" + std::to_string(i)));
  }
  VerificationWorker worker(*jobs_, *listener_, verifier, options);
  worker.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (Count("SELECT count(*) FROM verification_jobs") > 0 && absl::Now() < deadline) {
    verifier.Release();
    absl::SleepFor(absl::Milliseconds(10));
  }
  worker.Stop();
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
  EXPECT_LE(verifier.max_parked(), 40);
  EXPECT_EQ(verifier.calls(), 200) << "each job verified once";
  EXPECT_EQ(worker.finished(), 200);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE state = 'VERIFIED' AND attempts = 1"), 200);
}

TEST_F(VerifierWorkerTest, LeasesOfVerificationsInFlightAreRenewed) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ParkingVerifier verifier;
  WorkerOptions options = Options();
  options.max_in_flight = 10;
  options.lease = absl::Milliseconds(900);  // Renewed every 300 ms.
  VerificationWorker worker(*jobs_, *listener_, verifier, options);
  worker.Start();
  const std::string id = Submit("https://a.example/slow");
  ASSERT_TRUE(verifier.WaitForParked(1));
  absl::SleepFor(absl::Seconds(3));  // Over three leases: only renewal keeps the job ours.
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs "
                  "WHERE lease_owner IS NOT NULL AND lease_expires_at > now()"),
            1);
  EXPECT_EQ(verifier.calls(), 1) << "the job was claimed again: its lease ran out";
  verifier.Release();
  EXPECT_TRUE(WaitForState(id, "VERIFIED"));
  worker.Stop();
  EXPECT_EQ(worker.finished(), 1);
}

TEST_F(VerifierWorkerTest, StopWaitsForVerificationsInFlightAndRecordsThem) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ParkingVerifier verifier;
  WorkerOptions options = Options();
  options.max_in_flight = 10;
  VerificationWorker worker(*jobs_, *listener_, verifier, options);
  worker.Start();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(Submit("https://a.example/slow-" + std::to_string(i)));
  }
  ASSERT_TRUE(verifier.WaitForParked(3));
  std::thread stopper([&worker] { worker.Stop(); });
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(worker.finished(), 0);  // Stop is waiting for them.
  verifier.Release();               // The sources answer (or the fetcher's deadline comes).
  stopper.join();
  EXPECT_EQ(worker.finished(), 3);
  for (const std::string& id : ids) {
    EXPECT_EQ(StateOf(id), "VERIFIED");
  }
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
}

}  // namespace
}  // namespace portcullis::verifier::queue
