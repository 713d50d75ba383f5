// CountDueJobs against a real PostgreSQL: what the queue-depth metric reports.
#include "verifier-service/src/store/pg_queue_depth.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgQueueDepthTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    url_ = url;
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 1, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
  }

  // `count` mentions, each with a job whose columns are set by `job_columns` (SQL expressions
  // for run_at, lease_owner, lease_expires_at).
  void AddJobs(int count, const std::string& run_at, const std::string& lease_owner,
               const std::string& lease_expires_at) {
    pqxx::connection connection(url_);
    pqxx::work work(connection);
    work.exec0(absl::StrCat(
        "WITH m AS (INSERT INTO mentions (source, target, source_hash, target_hash) "
        "  SELECT 'https://a.example/' || g || '/' || n, 'https://b.example/', "
        "         sha256(('s' || g || '/' || n)::bytea), sha256('t'::bytea) "
        "  FROM generate_series(1, ",
        count, ") g, (SELECT ", ++batch_,
        " AS n) b RETURNING id) "
        "INSERT INTO verification_jobs (mention_id, kind, run_at, lease_owner, lease_expires_at) "
        "SELECT id, 'VERIFY', ",
        run_at, ", ", lease_owner, ", ", lease_expires_at, " FROM m"));
    work.commit();
  }

  std::string url_;
  int batch_ = 0;
  std::unique_ptr<PgConnectionPool> pool_;
};

TEST_F(VerifierPgQueueDepthTest, CountsDueUnleasedJobsOnly) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<int64_t> empty = CountDueJobs(*pool_, 1000);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(*empty, 0);

  AddJobs(5, "now() - interval '1 minute'", "NULL", "NULL");                         // Due.
  AddJobs(3, "now() + interval '1 hour'", "NULL", "NULL");                           // Retry later.
  AddJobs(2, "now() - interval '1 minute'", "'w1'", "now() + interval '1 hour'");    // Running.
  AddJobs(4, "now() - interval '1 hour'", "'dead'", "now() - interval '1 minute'");  // Lease lost.
  absl::StatusOr<int64_t> depth = CountDueJobs(*pool_, 1000);
  ASSERT_TRUE(depth.ok()) << depth.status();
  EXPECT_EQ(*depth, 5 + 4);
}

TEST_F(VerifierPgQueueDepthTest, SaturatesAtTheCap) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  AddJobs(50, "now()", "NULL", "NULL");
  absl::StatusOr<int64_t> capped = CountDueJobs(*pool_, 20);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(*capped, 20);
  absl::StatusOr<int64_t> all = CountDueJobs(*pool_, 10000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, 50);
}

}  // namespace
}  // namespace portcullis::verifier::store
