#include "verifier-service/src/store/pg_connection_pool.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"

namespace portcullis::verifier::store {
namespace {

std::unique_ptr<PgConnectionPool> MakePool(const std::string& url, int size,
                                           absl::Duration acquire_timeout = absl::Seconds(2),
                                           absl::Duration statement_timeout = absl::Seconds(5)) {
  absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
      PgConnectionPool::Create({url, size, acquire_timeout, statement_timeout});
  EXPECT_TRUE(pool.ok()) << pool.status();
  return pool.ok() ? *std::move(pool) : nullptr;
}

// Quotes and backslashes escaped, NUL dropped (PostgreSQL cannot store it), every element quoted
// so braces, commas and spaces stay inside it; read back by PostgreSQL in the batch statements'
// tests (pg_job_store_test).
TEST(VerifierPgConnectionPoolTest, TextArrayLiteralQuotesEveryElement) {
  EXPECT_EQ(TextArrayLiteral({}), "{}");
  EXPECT_EQ(TextArrayLiteral({""}), "{\"\"}");
  EXPECT_EQ(TextArrayLiteral({"a\"b", "c\\d", std::string("e\0f\0", 4), "{g, h}", "\"\\"}),
            "{\"a\\\"b\",\"c\\\\d\",\"ef\",\"{g, h}\",\"\\\"\\\\\"}");
}

TEST(VerifierPgConnectionPoolTest, RefusesBadOptions) {
  EXPECT_FALSE(PgConnectionPool::Create({"", 1, absl::Seconds(1), absl::Seconds(1)}).ok());
  EXPECT_FALSE(PgConnectionPool::Create({"x", 0, absl::Seconds(1), absl::Seconds(1)}).ok());
  EXPECT_FALSE(PgConnectionPool::Create({"x", 1, absl::ZeroDuration(), absl::Seconds(1)}).ok());
}

TEST(VerifierPgConnectionPoolTest, OpensLazilyAndReuses) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 4);
  EXPECT_EQ(pool->open_connections(), 0);
  int pid_first = 0;
  int pid_second = 0;
  ASSERT_TRUE(pool->Run("test", [&](pqxx::connection& c) { pid_first = c.backendpid(); }).ok());
  ASSERT_TRUE(pool->Run("test", [&](pqxx::connection& c) { pid_second = c.backendpid(); }).ok());
  EXPECT_EQ(pool->open_connections(), 1);
  EXPECT_EQ(pid_first, pid_second);
}

TEST(VerifierPgConnectionPoolTest, SetsStatementTimeout) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1, absl::Seconds(2), absl::Milliseconds(100));
  std::string value;
  ASSERT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::nontransaction t(c);
                          value = t.exec1("SHOW statement_timeout")[0].as<std::string>();
                        })
                  .ok());
  EXPECT_EQ(value, "100ms");
  const absl::Status status = pool->Run("test", [](pqxx::connection& c) {
    pqxx::nontransaction t(c);
    t.exec("SELECT pg_sleep(5)");
  });
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_TRUE(pool->Run("test",
                        [](pqxx::connection& c) {
                          pqxx::nontransaction t(c);
                          t.exec1("SELECT 1");
                        })
                  .ok())
      << "the connection is still usable";
}

// The writers' connections (OpenWriterConnections): one generic plan per statement, indexes always, and no JIT even for
// a statement that can only scan a table (costed as a disabled scan, past JIT's threshold).
TEST(VerifierPgConnectionPoolTest, KeyedConnectionsNeverJitCompile) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  {
    pqxx::connection c(db->connection_string());
    pqxx::nontransaction t(c);
    t.exec0("CREATE TABLE keyed_pool_probe (x int)");
    t.exec0("INSERT INTO keyed_pool_probe SELECT generate_series(1, 10)");
  }
  absl::StatusOr<std::vector<std::unique_ptr<PgConnectionPool>>> writers = OpenWriterConnections(
      {db->connection_string(), 8, absl::Seconds(2), absl::Seconds(5)}, 1);
  ASSERT_TRUE(writers.ok()) << writers.status();
  ASSERT_EQ(writers->size(), 1u);
  std::string plan;
  ASSERT_TRUE(writers->front()
                  ->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::nontransaction t(c);
                          EXPECT_EQ(t.exec1("SHOW plan_cache_mode")[0].as<std::string>(),
                                    "force_generic_plan");
                          EXPECT_EQ(t.exec1("SHOW enable_seqscan")[0].as<std::string>(), "off");
                          for (const pqxx::row& row :
                               t.exec("EXPLAIN (ANALYZE) SELECT sum(x) FROM keyed_pool_probe")) {
                            plan += row[0].as<std::string>() + "\n";
                          }
                        })
                  .ok());
  EXPECT_NE(plan.find("Seq Scan"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("JIT"), std::string::npos) << plan;
}

TEST(VerifierPgConnectionPoolTest, AcquireWaitsAtMostTheTimeout) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1, absl::Milliseconds(100));
  absl::Notification holding;
  absl::Notification release;
  std::thread holder([&] {
    EXPECT_TRUE(pool->Run("hold",
                          [&](pqxx::connection&) {
                            holding.Notify();
                            release.WaitForNotification();
                          })
                    .ok());
  });
  holding.WaitForNotification();
  const absl::Status status = pool->Run("test", [](pqxx::connection&) {});
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  release.Notify();
  holder.join();
  EXPECT_TRUE(pool->Run("test", [](pqxx::connection&) {}).ok());
}

TEST(VerifierPgConnectionPoolTest, SqlErrorsAreInternalWithoutSql) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1);
  const absl::Status status = pool->Run("test", [](pqxx::connection& c) {
    pqxx::nontransaction t(c);
    t.exec("SELECT secret_column FROM no_such_table");
  });
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_EQ(status.message().find("no_such_table"), absl::string_view::npos) << status;
  EXPECT_EQ(status.message().find("SELECT"), absl::string_view::npos) << status;
  EXPECT_EQ(pool->open_connections(), 1) << "an SQL error does not cost the connection";
}

TEST(VerifierPgConnectionPoolTest, BrokenConnectionIsDroppedAndReopened) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1);
  int first_pid = 0;
  const absl::Status killed = pool->Run("test", [&](pqxx::connection& c) {
    first_pid = c.backendpid();
    pqxx::nontransaction t(c);
    t.exec("SELECT pg_terminate_backend(pg_backend_pid())");
  });
  EXPECT_TRUE(absl::IsUnavailable(killed)) << killed;
  int second_pid = 0;
  ASSERT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::nontransaction t(c);
                          second_pid = t.exec1("SELECT pg_backend_pid()")[0].as<int>();
                        })
                  .ok());
  EXPECT_NE(first_pid, second_pid);
  EXPECT_EQ(pool->open_connections(), 1);
}

TEST(VerifierPgConnectionPoolTest, DeadServerIsUnavailable) {
  auto pool = MakePool("host=/nonexistent/portcullis user=postgres dbname=none", 2);
  const absl::Status status = pool->Run("test", [](pqxx::connection&) {});
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_EQ(pool->open_connections(), 0);
}

constexpr PgStatement kAddOne{"pool_test_add_one", "SELECT $1::int + 1"};
constexpr PgStatement kCoalesce{"pool_test_coalesce", "SELECT coalesce($1::text, 'null')"};
constexpr PgStatement kAddOneAgain{"pool_test_add_one", "SELECT $1::int + 2"};

// How many statements the server has prepared in this session, by name.
int ServerPrepared(pqxx::transaction_base& t, const char* name) {
  return t.exec_params1("SELECT count(*) FROM pg_prepared_statements WHERE name = $1", name)[0]
      .as<int>();
}

TEST(VerifierPgConnectionPoolTest, PreparedStatementIsPreparedOncePerConnection) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1);
  std::vector<int> answers;
  std::vector<int> on_server;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(pool->Run("test",
                          [&](pqxx::connection& c) {
                            pqxx::work t(c);
                            on_server.push_back(ServerPrepared(t, kAddOne.name));
                            answers.push_back(ExecPrepared1(t, kAddOne, i)[0].as<int>());
                            t.commit();
                          })
                    .ok());
  }
  EXPECT_EQ(answers, (std::vector<int>{1, 2, 3}));
  // Not prepared before its first execution (lazily), prepared from then on.
  EXPECT_EQ(on_server, (std::vector<int>{0, 1, 1}));
}

TEST(VerifierPgConnectionPoolTest, PreparedStatementSurvivesRollbackAndTakesNull) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1);
  std::string first;
  ASSERT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::work t(c);
                          first = ExecPrepared1(t, kCoalesce, "x")[0].as<std::string>();
                          // No commit: rolled back.
                        })
                  .ok());
  EXPECT_EQ(first, "x");
  std::string second;
  int on_server = 0;
  ASSERT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::work t(c);
                          on_server = ServerPrepared(t, kCoalesce.name);
                          const char* null = nullptr;
                          second = ExecPrepared1(t, kCoalesce, null)[0].as<std::string>();
                        })
                  .ok());
  EXPECT_EQ(on_server, 1);
  EXPECT_EQ(second, "null");
}

TEST(VerifierPgConnectionPoolTest, TwoStatementsUnderOneNameFailInsteadOfRunningTheWrongOne) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1);
  ASSERT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::work t(c);
                          ExecPrepared1(t, kAddOne, 1);
                        })
                  .ok());
  int answer = 0;
  const absl::Status status = pool->Run("test", [&](pqxx::connection& c) {
    pqxx::work t(c);
    answer = ExecPrepared1(t, kAddOneAgain, 1)[0].as<int>();
  });
  EXPECT_TRUE(absl::IsInternal(status)) << status;
  EXPECT_EQ(answer, 0);
  EXPECT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::work t(c);
                          answer = ExecPrepared1(t, kAddOne, 1)[0].as<int>();
                        })
                  .ok());
  EXPECT_EQ(answer, 2) << "the first definition still runs";
}

TEST(VerifierPgConnectionPoolTest, PreparedStatementOnAReopenedConnection) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  auto pool = MakePool(db->connection_string(), 1);
  ASSERT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::work t(c);
                          ExecPrepared1(t, kAddOne, 1);
                          t.exec("SELECT pg_terminate_backend(pg_backend_pid())");
                        })
                  .code() == absl::StatusCode::kUnavailable);
  int answer = 0;
  EXPECT_TRUE(pool->Run("test",
                        [&](pqxx::connection& c) {
                          pqxx::work t(c);
                          answer = ExecPrepared1(t, kAddOne, 41)[0].as<int>();
                        })
                  .ok());
  EXPECT_EQ(answer, 42) << "the new connection prepares it again";
}

}  // namespace
}  // namespace portcullis::verifier::store
