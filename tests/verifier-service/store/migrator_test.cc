#include "verifier-service/src/store/migrator.h"

#include <thread>

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"

namespace portcullis::verifier::store {
namespace {

int64_t CountRows(const std::string& url, const std::string& query) {
  pqxx::connection connection(url);
  pqxx::nontransaction transaction(connection);
  return transaction.exec1(query)[0].as<int64_t>();
}

std::vector<Migration> Builtin() {
  absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
  EXPECT_TRUE(migrations.ok()) << migrations.status();
  return migrations.ok() ? *migrations : std::vector<Migration>{};
}

TEST(VerifierMigratorTest, AppliesOnceThenIsANoOp) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  const std::vector<Migration> migrations = Builtin();
  const Migrator migrator(migrations);

  absl::StatusOr<std::vector<int>> first = migrator.Apply(db->connection_string());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->size(), migrations.size());
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT count(*) FROM mentions"), 0);
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT count(*) FROM schema_migrations"),
            static_cast<int64_t>(migrations.size()));

  absl::StatusOr<std::vector<int>> second = migrator.Apply(db->connection_string());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->empty());
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT count(*) FROM schema_migrations"),
            static_cast<int64_t>(migrations.size()));
}

TEST(VerifierMigratorTest, AppliesOnlyNewMigrations) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  std::vector<Migration> migrations = {{1, "one", "CREATE TABLE one (n int);"}};
  ASSERT_TRUE(Migrator(migrations).Apply(db->connection_string()).ok());
  migrations.push_back({2, "two", "CREATE TABLE two (n int); INSERT INTO two VALUES (2);"});
  absl::StatusOr<std::vector<int>> applied = Migrator(migrations).Apply(db->connection_string());
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(*applied, std::vector<int>{2});
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT count(*) FROM two"), 1);
}

TEST(VerifierMigratorTest, ConcurrentMigratorsApplyEachMigrationExactlyOnce) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  // Not idempotent on purpose: a second application would fail (table exists) or double-count.
  std::vector<Migration> migrations = Builtin();
  const int next = static_cast<int>(migrations.size()) + 1;
  migrations.push_back({next, "counter", "CREATE TABLE counter (n int);"});
  migrations.push_back(
      {next + 1, "count", "SELECT pg_sleep(0.2); INSERT INTO counter VALUES (1);"});

  absl::StatusOr<std::vector<int>> results[4];
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = Migrator(migrations).Apply(db->connection_string()); });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  size_t total_applied = 0;
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    total_applied += result->size();
  }
  EXPECT_EQ(total_applied, migrations.size());
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT count(*) FROM counter"), 1);
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT count(*) FROM schema_migrations"),
            static_cast<int64_t>(migrations.size()));
}

TEST(VerifierMigratorTest, RefusesADatabaseWithAnUnknownNewerVersion) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  const Migrator migrator(Builtin());
  ASSERT_TRUE(migrator.Apply(db->connection_string()).ok());
  {
    pqxx::connection connection(db->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0(
        "INSERT INTO schema_migrations (version, name) VALUES (9999, 'from_the_future')");
    transaction.commit();
  }
  const absl::Status status = migrator.Apply(db->connection_string()).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_NE(status.message().find("9999"), absl::string_view::npos) << status;
}

TEST(VerifierMigratorTest, FailingMigrationIsInternalAndNotRecorded) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  const std::vector<Migration> migrations = {{1, "one", "CREATE TABLE one (n int);"},
                                             {2, "broken", "CREATE TABLE one (n int);"}};
  const absl::Status status = Migrator(migrations).Apply(db->connection_string()).status();
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_EQ(CountRows(db->connection_string(), "SELECT max(version) FROM schema_migrations"), 1);
}

TEST(VerifierMigratorTest, UnreachableDatabaseIsUnavailable) {
  const Migrator migrator(Builtin());
  const absl::Status status =
      migrator.Apply("host=/nonexistent/portcullis user=postgres dbname=none").status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
}

}  // namespace
}  // namespace portcullis::verifier::store
