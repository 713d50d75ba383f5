// The retention sweeper on a real PostgreSQL: what goes and what stays, the batches' cost on
// 100k rows (the longest transaction, watched from outside, against one unbatched DELETE in the
// same run), rows locked by an intake skipped rather than waited for, and one pod at a time.
#include "verifier-service/src/store/pg_retention_store.h"

#include <atomic>
#include <iostream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "prometheus/registry.h"
#include "tests/support/test_database.h"
#include "verifier-service/src/lifecycle/retention_sweeper.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgRetentionStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    url_ = url;
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    pool_ = NewPool();
    store_ = std::make_unique<PgRetentionStore>(*pool_);
  }

  std::unique_ptr<PgConnectionPool> NewPool() {
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url_, 4, absl::Seconds(5), absl::Seconds(30)});
    EXPECT_TRUE(pool.ok()) << pool.status();
    return pool.ok() ? *std::move(pool) : nullptr;
  }

  void Exec(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    transaction.exec0(sql);
  }

  int64_t Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<int64_t>();
  }

  // `count` mentions in `state`, last changed `age` ago (an SQL interval), sources named by `tag`.
  void AddMentions(const std::string& tag, const std::string& state, const std::string& age,
                   int count) {
    Exec(absl::StrCat(
        "INSERT INTO mentions (source, target, source_hash, target_hash, state, reason, "
        "  target_domain, source_host, created_at, updated_at) "
        "SELECT s, 'https://site.example/post', sha256(convert_to(s, 'UTF8')), "
        "  sha256('https://site.example/post'::bytea), '",
        state, "', ", state == "FAILED" ? "'no_link'" : "NULL",
        ", 'site.example', 's.example', now() - interval '", age, "', now() - interval '", age,
        "' FROM (SELECT 'https://s.example/", tag, "/' || i AS s FROM generate_series(1, ", count,
        ") i) g"));
  }

  lifecycle::RetentionSweeperOptions Options(int batch, int max_batches) {
    lifecycle::RetentionSweeperOptions options;
    options.periods.failed_mentions = absl::Hours(30 * 24);
    options.periods.accepted_items = absl::Hours(7 * 24);
    options.periods.dead_letters = absl::Hours(30 * 24);
    options.periods.finished_deliveries = absl::Hours(30 * 24);
    options.batch = batch;
    options.max_batches_per_pass = max_batches;
    return options;
  }

  std::string url_;
  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgRetentionStore> store_;
};

TEST_F(VerifierPgRetentionStoreTest, OldFailedMentionsGoYoungerAndVerifiedOnesStay) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  AddMentions("old-failed", "FAILED", "31 days", 7);
  AddMentions("young-failed", "FAILED", "29 days", 2);
  AddMentions("old-verified", "VERIFIED", "400 days", 3);
  AddMentions("old-pending", "PENDING", "400 days", 1);
  Exec(
      "INSERT INTO verification_jobs (mention_id, kind) SELECT id, 'VERIFY' FROM mentions "
      "WHERE state = 'PENDING'");
  // The ingest side: items, dead letters and decisions, old and young.
  Exec(
      "INSERT INTO ingest_items (publisher, item_id, content_hash, canonical_body, "
      "signature_valid, accepted_at) SELECT 'feed', 'i' || i, repeat('0', 64), '{}', true, "
      "now() - CASE WHEN i <= 4 THEN interval '8 days' ELSE interval '6 days' END "
      "FROM generate_series(1, 6) i");
  Exec(
      "INSERT INTO dead_letters (publisher, item_id, content_hash, reason, signature_header, "
      "message_id, timestamp_header, raw_body, canonical_body, created_at) "
      "SELECT 'feed', 'd' || i, repeat('0', 64), 'missing_provenance_id', '', '', '', '{}', "
      "'{}', now() - CASE WHEN i <= 2 THEN interval '31 days' ELSE interval '1 day' END "
      "FROM generate_series(1, 5) i");
  Exec(
      "INSERT INTO ingest_decisions (publisher, content_hash, item_id, decision, "
      "signature_valid, decided_at, expires_at) SELECT 'feed', lpad(i::text, 64, '0'), "
      "'x' || i, 'dropped', false, now() - interval '4 days', "
      "now() + CASE WHEN i <= 25 THEN interval '-1 minute' ELSE interval '1 hour' END "
      "FROM generate_series(1, 30) i");
  // The drop ledger: 2 received 8 days ago (past the 7-day drop retention), 3 past their own
  // keep_drops, 1 young; the publisher's usage counts them all.
  Exec(
      "INSERT INTO dropped_deliveries (publisher, item_id, content_hash, reason, "
      "signature_header, message_id, timestamp_header, raw_body, canonical_body, size_bytes, "
      "received_at, expires_at) SELECT 'feed', 'r' || i, repeat('0', 64), 'signature_required', "
      "'', '', '', '{}', '{}', 10, "
      "now() - CASE WHEN i <= 2 THEN interval '8 days' ELSE interval '1 day' END, "
      "now() + CASE WHEN i BETWEEN 3 AND 5 THEN interval '-1 minute' ELSE interval '1 day' END "
      "FROM generate_series(1, 6) i; "
      "INSERT INTO drop_ledger_usage VALUES ('feed', 60)");
  // Outbound deliveries: ended 31 days ago (delivered, failed) go; pending ones and young ended
  // ones stay.
  Exec(
      "INSERT INTO subscriptions (site, url, events, signature_version, signing_key) VALUES "
      "('site.example', 'https://receiver.example/hook', ARRAY['mention.verified'], 'v1', "
      "'\\x00'); "
      "INSERT INTO deliveries (subscription_id, event_type, body, state, created_at) "
      "SELECT s.id, 'mention.verified', '{}', d.state, now() - d.age "
      "FROM subscriptions s, (VALUES ('delivered', interval '31 days'), "
      "  ('failed', interval '31 days'), ('pending', interval '31 days'), "
      "  ('delivered', interval '29 days')) AS d(state, age)");

  prometheus::Registry registry;
  lifecycle::RetentionSweeper sweeper(*store_, Options(3, 100), registry);
  absl::StatusOr<lifecycle::SweepReport> report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ran);
  EXPECT_EQ(report->deleted["mentions"], 7);
  EXPECT_EQ(report->deleted["ingest_items"], 4);
  EXPECT_EQ(report->deleted["dead_letters"], 2);
  EXPECT_EQ(report->deleted["ingest_decisions"], 25);
  EXPECT_EQ(report->deleted["dropped_deliveries"], 5);
  EXPECT_EQ(report->deleted["deliveries"], 2);
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE state = 'pending'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE created_at > now() - interval '30 days'"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries WHERE item_id = 'r6'"), 1);
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage WHERE publisher = 'feed'"), 10);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE source LIKE '%/old-failed/%'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE source LIKE '%/young-failed/%'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE state = 'VERIFIED'"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions WHERE state = 'PENDING'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM dead_letters"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 5);
  // Nothing left to do: the next pass deletes nothing.
  report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->deleted["mentions"], 0);

  absl::StatusOr<std::vector<TableRowEstimate>> estimates = store_->EstimateTableRows();
  ASSERT_TRUE(estimates.ok()) << estimates.status();
  EXPECT_EQ(estimates->size(), 8u);
}

// An intake holding an old FAILED row (a re-send being written) is not waited for: the sweep
// finishes at once without that row, and takes it on a later pass.
TEST_F(VerifierPgRetentionStoreTest, RowsHeldByAnotherTransactionAreSkippedNotWaitedFor) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  AddMentions("old-failed", "FAILED", "40 days", 5);
  pqxx::connection intake(url_);
  auto holding = std::make_unique<pqxx::work>(intake);
  holding->exec1(
      "SELECT id FROM mentions WHERE source = 'https://s.example/old-failed/3' "
      "FOR UPDATE");
  prometheus::Registry registry;
  lifecycle::RetentionSweeper sweeper(*store_, Options(10, 100), registry);
  const absl::Time started = absl::Now();
  absl::StatusOr<lifecycle::SweepReport> report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_LT(absl::Now() - started, absl::Seconds(5));
  EXPECT_EQ(report->deleted["mentions"], 4);
  holding->commit();
  holding.reset();
  report = sweeper.SweepOnce();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->deleted["mentions"], 1);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 0);
}

TEST_F(VerifierPgRetentionStoreTest, TwoPodsNeverSweepAtOnce) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  AddMentions("old-failed", "FAILED", "40 days", 5);
  // The second pod: its own pool (its own connections), the same database.
  std::unique_ptr<PgConnectionPool> other_pool = NewPool();
  ASSERT_NE(other_pool, nullptr);
  PgRetentionStore other_store(*other_pool);
  prometheus::Registry other_registry;
  lifecycle::RetentionSweeper other(other_store, Options(10, 100), other_registry);

  bool inside = false;
  absl::StatusOr<bool> ran = store_->WithSweepLock([&](RetentionSweepSession&) {
    inside = true;
    // While this pod sweeps, the other's pass does not run and deletes nothing.
    absl::StatusOr<lifecycle::SweepReport> report = other.SweepOnce();
    EXPECT_TRUE(report.ok()) << report.status();
    EXPECT_FALSE(report->ran);
    EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 5);
    return absl::OkStatus();
  });
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_TRUE(*ran);
  EXPECT_TRUE(inside);

  // A pass that fails lets go of the lock too.
  absl::StatusOr<bool> failed = store_->WithSweepLock(
      [&](RetentionSweepSession&) { return absl::InternalError("pass failed"); });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);

  absl::StatusOr<lifecycle::SweepReport> report = other.SweepOnce();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ran);
  EXPECT_EQ(report->deleted["mentions"], 5);
}

// The bound: 100k expired rows, a small batch; no transaction of the sweep is ever seen
// open longer than the bound by a probe polling pg_stat_activity, and the same rows deleted by
// one unbatched DELETE (the same run, the same machine) are the reference.
TEST_F(VerifierPgRetentionStoreTest, HundredThousandRowsGoInBatchesThatNeverHoldLocksLong) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  constexpr int kRows = 100000;
  constexpr int kBatch = 200;
  constexpr absl::Duration kBound = absl::Seconds(1);
  AddMentions("bulk", "FAILED", "60 days", kRows);
  AddMentions("young", "FAILED", "1 day", 10);
  Exec("ANALYZE mentions");

  // The probe: the oldest open transaction of any other client session (the sweeper's; not
  // autovacuum, whose VACUUM of the table the sweep empties may run for seconds on a loaded
  // machine and holds no lock an intake waits for), polled until the sweep ends.
  std::atomic<bool> done{false};
  int64_t longest_seen_us = 0;
  std::string longest_query;
  int samples = 0;
  std::thread probe([&] {
    pqxx::connection connection(url_);
    while (!done.load()) {
      pqxx::nontransaction transaction(connection);
      const pqxx::result oldest = transaction.exec(
          "SELECT (extract(epoch FROM clock_timestamp() - xact_start) * 1000000)::bigint, "
          "  left(query, 200) FROM pg_stat_activity "
          "WHERE datname = current_database() AND backend_type = 'client backend' "
          "AND pid <> pg_backend_pid() AND xact_start IS NOT NULL "
          "ORDER BY xact_start LIMIT 1");
      if (!oldest.empty() && oldest[0][0].as<int64_t>() > longest_seen_us) {
        longest_seen_us = oldest[0][0].as<int64_t>();
        longest_query = oldest[0][1].c_str();
      }
      ++samples;
    }
  });

  prometheus::Registry registry;
  lifecycle::RetentionSweeper sweeper(*store_, Options(kBatch, 10000), registry);
  const absl::Time started = absl::Now();
  absl::StatusOr<lifecycle::SweepReport> report = sweeper.SweepOnce();
  const absl::Duration elapsed = absl::Now() - started;
  done.store(true);
  probe.join();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->deleted["mentions"], kRows);
  EXPECT_GE(report->batches, kRows / kBatch);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 10);
  EXPECT_GT(samples, 10);
  const absl::Duration longest_seen = absl::Microseconds(longest_seen_us);
  EXPECT_LT(report->longest_batch, kBound);
  EXPECT_LT(longest_seen, kBound) << "the longest transaction seen: " << longest_query;

  // The reference: the same rows in one statement.
  AddMentions("bulk", "FAILED", "60 days", kRows);
  Exec("ANALYZE mentions");
  pqxx::connection connection(url_);
  const absl::Time one_started = absl::Now();
  {
    pqxx::work transaction(connection);
    transaction.exec0(
        "DELETE FROM mentions WHERE state = 'FAILED' "
        "AND updated_at < now() - interval '30 days'");
    transaction.commit();
  }
  const absl::Duration one_statement = absl::Now() - one_started;

  const std::string measured = absl::StrFormat(
      "retention sweep of %d FAILED mentions, batch %d: %d batches in %s = %.0f rows/s; "
      "longest batch %s (probe saw %s over %d samples); one unbatched DELETE of the same rows: "
      "%s (= the lock it holds)",
      kRows, kBatch, report->batches, absl::FormatDuration(elapsed),
      kRows / absl::ToDoubleSeconds(elapsed), absl::FormatDuration(report->longest_batch),
      absl::FormatDuration(longest_seen), samples, absl::FormatDuration(one_statement));
  std::cout << measured << "\n";
  RecordProperty("measured", measured);
}

}  // namespace
}  // namespace portcullis::verifier::store
