// VerifyMentionNow (and JobStore::ClaimMention under it) against a real PostgreSQL: the mention's
// own job is claimed, verified and recorded once, through the queue's bookkeeping.
#include "verifier-service/src/server/verify_now_rpcs.h"

#include <atomic>

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/intake/target_rules.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_job_store.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::server {
namespace {

using queue::VerificationOutcome;
using store::MentionClaim;
using store::MentionState;

class ScriptedVerifier final : public queue::MentionVerifier {
 public:
  VerificationOutcome Verify(const store::JobRecord& job) override {
    ++calls;
    last_attempts = job.attempts;
    return next;
  }
  VerificationOutcome next = VerificationOutcome::Verified();
  std::atomic<int> calls{0};
  std::atomic<int> last_attempts{0};
};

class VerifierVerifyNowTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    url_ = url;
    absl::StatusOr<std::vector<store::Migration>> migrations = store::BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(store::Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<store::PgConnectionPool>> pool =
        store::PgConnectionPool::Create({url, 2, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    mentions_ = std::make_unique<store::PgMentionStore>(*pool_, absl::Hours(24));
    jobs_ = std::make_unique<store::PgJobStore>(*pool_);
    store::PgSiteStore sites(*pool_);
    ASSERT_TRUE(sites.AddSite("b.example", {}).ok());
    ASSERT_TRUE(
        sites.AddTargets({{"https://b.example/", intake::TargetKind::kPrefix, "b.example"}}, {})
            .ok());
    backend_.jobs = jobs_.get();
    backend_.verifier = &verifier_;
    backend_.owner = "verify-now-test";
    backend_.retry = {absl::Seconds(30), absl::Hours(1), 3};
    backend_.busy_wait = absl::Milliseconds(300);
  }

  std::string Submit() {
    const std::string source = "https://a.example/reply";
    const std::string target = "https://b.example/post";
    absl::StatusOr<store::SubmitResult> result = mentions_->Submit(
        {source, target, crypto::Sha256(source), crypto::Sha256(target), "b.example", target});
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? result->mention_id : "";
  }

  VerifyNowResult Now(const std::string& id) {
    absl::StatusOr<VerifyNowResult> result = VerifyMentionNow(backend_, *mentions_, id, {});
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : VerifyNowResult{};
  }

  long long Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<long long>();
  }

  std::string url_;
  std::unique_ptr<store::PgConnectionPool> pool_;
  std::unique_ptr<store::PgMentionStore> mentions_;
  std::unique_ptr<store::PgJobStore> jobs_;
  ScriptedVerifier verifier_;
  VerifyNowBackend backend_;
};

TEST_F(VerifierVerifyNowTest, ANewMentionIsVerifiedAndItsJobIsDone) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string id = Submit();
  const VerifyNowResult result = Now(id);
  EXPECT_EQ(result.mention.state, MentionState::kVerified);
  EXPECT_EQ(result.transient_reason, "");
  EXPECT_EQ(verifier_.calls, 1);
  EXPECT_EQ(verifier_.last_attempts, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 1);
}

TEST_F(VerifierVerifyNowTest, APermanentFailureIsRecordedWithItsReason) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  verifier_.next = VerificationOutcome::Failed("http_4xx");
  const VerifyNowResult result = Now(Submit());
  EXPECT_EQ(result.mention.state, MentionState::kFailed);
  EXPECT_EQ(result.mention.reason, "http_4xx");
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
}

TEST_F(VerifierVerifyNowTest, ATransientFailureLeavesTheMentionQueuedForARetry) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  verifier_.next = VerificationOutcome::Retry("http_5xx");
  const std::string id = Submit();
  VerifyNowResult result = Now(id);
  EXPECT_EQ(result.mention.state, MentionState::kPending);
  EXPECT_EQ(result.transient_reason, "http_5xx");
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs WHERE run_at > now() "
                  "AND lease_owner IS NULL AND attempts = 1"),
            1);
  // VerifyNow again does not wait for the retry time: it claims the job now, attempt 2.
  verifier_.next = VerificationOutcome::Verified();
  result = Now(id);
  EXPECT_EQ(result.mention.state, MentionState::kVerified);
  EXPECT_EQ(verifier_.last_attempts, 2);
}

TEST_F(VerifierVerifyNowTest, TheLastTransientAttemptGivesUpAsTheWorkersDo) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  verifier_.next = VerificationOutcome::Retry("timeout");
  const std::string id = Submit();
  Now(id);
  Now(id);
  const VerifyNowResult result = Now(id);  // Attempt 3 of 3.
  EXPECT_EQ(result.mention.state, MentionState::kFailed);
  EXPECT_EQ(result.mention.reason, "unreachable");
}

TEST_F(VerifierVerifyNowTest, AMentionWithNoQueuedJobIsReadBackUnchanged) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  verifier_.next = VerificationOutcome::Failed("no_link");
  const std::string id = Submit();
  Now(id);
  // FAILED within the failure retention: Submit queues nothing, VerifyNow verifies nothing.
  Submit();
  const VerifyNowResult result = Now(id);
  EXPECT_EQ(result.mention.state, MentionState::kFailed);
  EXPECT_EQ(verifier_.calls, 1);
}

TEST_F(VerifierVerifyNowTest, AJobAWorkerHoldsIsNotClaimedTwice) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string id = Submit();
  absl::StatusOr<std::vector<store::JobRecord>> held = jobs_->Claim("worker", 1, absl::Minutes(1));
  ASSERT_TRUE(held.ok() && held->size() == 1u);
  absl::StatusOr<MentionClaim> claim = jobs_->ClaimMention(id, "other", absl::Minutes(1));
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->kind, MentionClaim::Kind::kBusy);

  const absl::Time start = absl::Now();
  const VerifyNowResult result = Now(id);  // Waits busy_wait, then answers what is stored.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_EQ(result.mention.state, MentionState::kPending);
  EXPECT_EQ(verifier_.calls, 0);
  // The worker's lease is untouched: its Finish still counts.
  store::JobResult done;
  EXPECT_TRUE(jobs_->Finish((*held)[0].job_id, "worker", done).ok());
}

TEST_F(VerifierVerifyNowTest, ClaimMentionSaysWhenThereIsNoJob) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<MentionClaim> claim =
      jobs_->ClaimMention("00000000-0000-0000-0000-000000000000", "x", absl::Minutes(1));
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->kind, MentionClaim::Kind::kNoJob);
}

}  // namespace
}  // namespace portcullis::verifier::server
