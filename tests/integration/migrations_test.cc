// Several verifier pods starting at once against one fresh database.
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"

namespace portcullis::integration {
namespace {

// Asks grpc.health.v1 until the server answers SERVING or `timeout` passes.
bool WaitForServing(int port, absl::Duration timeout) {
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    context.set_wait_for_ready(true);  // Drives the connection attempt while the server starts.
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    if (stub->Check(&context, request, &response).ok() &&
        response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

class MigrationsTest : public StackTest {
 protected:
  MigrationsTest() { start_stack_ = false; }
};

TEST_F(MigrationsTest, TwoVerifiersOnAFreshDatabaseBothStartAndMigrateOnce) {
  const int first_port = testing::FreeLoopbackPort();
  const int second_port = testing::FreeLoopbackPort();
  const auto start = [&](int port) {
    return testing::ChildProcess::Start(
        PORTCULLIS_VERIFIER_BINARY,
        {absl::StrCat("--grpc_listen=127.0.0.1:", port),
         absl::StrCat("--database_url=", database_->connection_string()),
         "--health_interval=200ms"},
        {}, absl::StrCat(::testing::TempDir(), "/verifier-", port, ".log"));
  };
  auto first = start(first_port);
  auto second = start(second_port);
  ASSERT_TRUE(first.ok() && second.ok());

  EXPECT_TRUE(WaitForServing(first_port, absl::Seconds(30))) << (*first)->Log();
  EXPECT_TRUE(WaitForServing(second_port, absl::Seconds(30))) << (*second)->Log();
  EXPECT_GE(QueryCount(*database_, "SELECT count(*) FROM schema_migrations"), 1);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) - count(DISTINCT version) FROM schema_migrations"),
            0);
  EXPECT_EQ(QueryCount(*database_, "SELECT count(*) FROM mentions"), 0);  // The table exists.
  EXPECT_EQ((*first)->Stop(), 0);
  EXPECT_EQ((*second)->Stop(), 0);
}

TEST_F(MigrationsTest, MigrateOnlyAppliesAndExits) {
  const testing::CommandResult result = testing::RunCommand(
      PORTCULLIS_VERIFIER_BINARY,
      {"--migrate-only", absl::StrCat("--database_url=", database_->connection_string())});
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_GE(QueryCount(*database_, "SELECT count(*) FROM schema_migrations"), 1);
  // Run again: nothing to do, still success.
  EXPECT_EQ(testing::RunCommand(PORTCULLIS_VERIFIER_BINARY,
                                {"--migrate-only",
                                 absl::StrCat("--database_url=", database_->connection_string())})
                .exit_code,
            0);
}

TEST_F(MigrationsTest, MissingDatabaseUrlIsOneLineAndExit2) {
  const testing::CommandResult result =
      testing::RunCommand(PORTCULLIS_VERIFIER_BINARY, {"--database_url="});
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("database_url"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace portcullis::integration
