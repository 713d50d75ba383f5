// The webmention lifecycle through the real gateway and verifier, inspected in PostgreSQL: which
// submission queues a verification job, and that 1,000 concurrent identical submissions make one
// row and one job.
#include <atomic>
#include <boost/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

namespace json = boost::json;

constexpr char kSource[] = "https://alice.example/reply";
constexpr char kTarget[] = "https://bob.example/post";

class LifecycleTest : public StackTest {
 protected:
  void Exec(const std::string& sql) {
    pqxx::connection connection(database_->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0(sql);
    transaction.commit();
  }

  // POSTs the pair, expects 202, returns the body.
  json::object Post() {
    const testing::HttpResult result = stack_->PostWebmention(kSource, kTarget);
    EXPECT_EQ(result.status, 202) << result.body;
    return result.status == 202 ? json::parse(result.body).as_object() : json::object();
  }

  long long Jobs() { return QueryCount(*database_, "SELECT count(*) FROM verification_jobs"); }
};

TEST_F(LifecycleTest, EachTransitionQueuesExactlyWhatItShould) {
  ASSERT_TRUE(stack_->ServeTarget(kTarget).ok());
  // New pair: PENDING, one job.
  json::object body = Post();
  EXPECT_EQ(body["state"].as_string(), "PENDING");
  EXPECT_EQ(Jobs(), 1);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM verification_jobs WHERE kind = 'VERIFY'"),
            1);

  // Same pair while PENDING: 202, no second job.
  body = Post();
  EXPECT_EQ(body["state"].as_string(), "PENDING");
  EXPECT_EQ(Jobs(), 1);

  // VERIFIED (as a worker would leave it): 202, one re-verification, never two queued.
  Exec("DELETE FROM verification_jobs; UPDATE mentions SET state = 'VERIFIED'");
  body = Post();
  EXPECT_EQ(body["state"].as_string(), "VERIFIED");
  EXPECT_EQ(
      QueryCount(*database_, "SELECT count(*) FROM verification_jobs WHERE kind = 'REVERIFY'"), 1);
  Post();
  EXPECT_EQ(Jobs(), 1);

  // FAILED an hour ago (retention 24 h): 202, nothing queued, still FAILED.
  Exec(
      "DELETE FROM verification_jobs; UPDATE mentions SET state = 'FAILED', reason = 'no_link', "
      "updated_at = now() - interval '1 hour'");
  body = Post();
  EXPECT_EQ(body["state"].as_string(), "FAILED");
  EXPECT_EQ(Jobs(), 0);

  // FAILED two days ago: starts again as PENDING with one job.
  Exec("UPDATE mentions SET updated_at = now() - interval '2 days'");
  body = Post();
  EXPECT_EQ(body["state"].as_string(), "PENDING");
  EXPECT_EQ(Jobs(), 1);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 1);
}

TEST_F(LifecycleTest, ThousandConcurrentIdenticalSubmissionsMakeOneRowAndOneJob) {
  ASSERT_TRUE(stack_->ServeTarget(kTarget).ok());
  constexpr int kThreads = 100;
  constexpr int kPerThread = 10;
  std::atomic<int> accepted{0};
  std::atomic<int> other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        const testing::HttpResult result = stack_->PostWebmention(kSource, kTarget);
        (result.status == 202 ? accepted : other)++;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(accepted.load(), kThreads * kPerThread);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 1);
  EXPECT_EQ(Jobs(), 1);
}

TEST_F(LifecycleTest, FailedRetentionIsAFlag) {
  stack_->StopVerifier();
  ASSERT_TRUE(stack_->StartVerifier({"--failed_retention=10m"}).ok());
  ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
  ASSERT_TRUE(stack_->ServeTarget(kTarget).ok());
  Post();
  Exec(
      "DELETE FROM verification_jobs; UPDATE mentions SET state = 'FAILED', "
      "updated_at = now() - interval '11 minutes'");
  EXPECT_EQ(Post()["state"].as_string(), "PENDING");
  EXPECT_EQ(Jobs(), 1);
}

TEST_F(LifecycleTest, ABadWorkerCountIsRefusedNamingTheFlag) {
  const testing::CommandResult result = testing::RunCommand(
      PORTCULLIS_VERIFIER_BINARY,
      {"--workers=-2", absl::StrCat("--database_url=", database_->connection_string())});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--workers"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace portcullis::integration
