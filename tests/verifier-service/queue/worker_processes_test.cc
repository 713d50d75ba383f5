// Several worker processes sharing one PostgreSQL queue: no job is verified twice, and a worker
// killed with SIGKILL mid-job loses that job to another worker once its lease runs out.
#include <signal.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/child_process.h"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::queue {
namespace {

class VerifierWorkerProcessesTest : public ::testing::Test {
 protected:
  void Open(const testing::TestDatabase& db) {
    url_ = db.connection_string();
    absl::StatusOr<std::vector<store::Migration>> migrations = store::BuiltinMigrations();
    ASSERT_TRUE(migrations.ok());
    ASSERT_TRUE(store::Migrator(*migrations).Apply(url_).ok());
    Exec(
        "CREATE TABLE test_verifications (job_id bigint, mention_id uuid, owner text, "
        "at timestamptz NOT NULL DEFAULT clock_timestamp())");
    absl::StatusOr<std::unique_ptr<store::PgConnectionPool>> pool =
        store::PgConnectionPool::Create({url_, 2, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok());
    pool_ = *std::move(pool);
    store::PgSiteStore sites(*pool_);
    ASSERT_TRUE(sites.AddSite("b.example", {}).ok());
    const store::TargetRule all{"https://b.example/", store::TargetKind::kPrefix, "b.example"};
    ASSERT_TRUE(sites.AddTargets({all}, {}).ok());
    mentions_ = std::make_unique<store::PgMentionStore>(*pool_);
  }

  void Submit(const std::string& source) {
    const std::string target = "https://b.example/";
    ASSERT_TRUE(mentions_
                    ->Submit({source, target, crypto::Sha256(source), crypto::Sha256(target),
                              "b.example", target})
                    .ok());
  }

  std::unique_ptr<testing::ChildProcess> StartWorker(const std::string& owner,
                                                     absl::Duration verify_time) {
    auto child = testing::ChildProcess::Start(
        PORTCULLIS_TEST_WORKER_BINARY,
        {absl::StrCat("--database_url=", url_), absl::StrCat("--owner=", owner), "--concurrency=4",
         "--lease=2s", absl::StrCat("--verify_time=", absl::FormatDuration(verify_time))},
        {}, absl::StrCat(::testing::TempDir(), "/worker-", owner, "-", getpid(), ".log"));
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? *std::move(child) : nullptr;
  }

  long long Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<long long>();
  }

  void Exec(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::work transaction(connection);
    transaction.exec0(sql);
    transaction.commit();
  }

  bool WaitFor(const std::string& sql, long long want, absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (Count(sql) == want) {
        return true;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  std::string url_;
  std::unique_ptr<store::PgConnectionPool> pool_;
  std::unique_ptr<store::PgMentionStore> mentions_;
};

TEST_F(VerifierWorkerProcessesTest, TwoProcessesShareTheQueueAndVerifyEachJobOnce) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(*db);
  auto first = StartWorker("first", absl::Milliseconds(20));
  auto second = StartWorker("second", absl::Milliseconds(20));
  ASSERT_TRUE(first && second);
  constexpr int kMentions = 200;
  for (int i = 0; i < kMentions; ++i) {
    Submit(absl::StrCat("https://a.example/", i));
  }
  EXPECT_TRUE(WaitFor("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'", kMentions,
                      absl::Seconds(60)))
      << first->Log() << second->Log();
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM test_verifications"), kMentions)
      << "a job was verified twice";
  EXPECT_EQ(Count("SELECT count(DISTINCT mention_id) FROM test_verifications"), kMentions);
  EXPECT_GT(Count("SELECT count(*) FROM test_verifications WHERE owner = 'first'"), 0);
  EXPECT_GT(Count("SELECT count(*) FROM test_verifications WHERE owner = 'second'"), 0);
  EXPECT_EQ(first->Stop(), 0);
  EXPECT_EQ(second->Stop(), 0);
}

TEST_F(VerifierWorkerProcessesTest, JobOfAKilledWorkerCompletesOnAnotherAfterTheLease) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(*db);
  auto doomed = StartWorker("doomed", absl::Hours(1));  // Never finishes its job.
  ASSERT_TRUE(doomed);
  Submit("https://a.example/killed-mid-job");
  ASSERT_TRUE(WaitFor("SELECT count(*) FROM test_verifications WHERE owner = 'doomed'", 1,
                      absl::Seconds(20)))
      << doomed->Log();
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs WHERE lease_owner = 'doomed'"), 1);
  doomed->Signal(SIGKILL);
  ASSERT_TRUE(doomed->Wait(absl::Seconds(10)).ok());

  auto survivor = StartWorker("survivor", absl::ZeroDuration());
  ASSERT_TRUE(survivor);
  EXPECT_TRUE(
      WaitFor("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'", 1, absl::Seconds(30)))
      << survivor->Log();
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM test_verifications WHERE owner = 'survivor'"), 1);
  // The survivor started only after the killed worker's lease (2 s, never renewed) ran out.
  EXPECT_EQ(Count("SELECT count(*) FROM test_verifications s, test_verifications d "
                  "WHERE s.owner = 'survivor' AND d.owner = 'doomed' "
                  "AND s.at >= d.at + interval '1 second'"),
            1);
  EXPECT_EQ(survivor->Stop(), 0);
}

}  // namespace
}  // namespace portcullis::verifier::queue
