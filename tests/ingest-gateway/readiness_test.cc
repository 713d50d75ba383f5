#include "ingest-gateway/src/readiness.h"

#include <atomic>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "ingest-gateway/src/grpc_verifier_client.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/ingest-gateway/http/test_http_client.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;

class FakeHealthChecker final : public HealthChecker {
 public:
  absl::Status Check(absl::Duration timeout) override {
    ++calls;
    last_timeout = timeout;
    return serving.load() ? absl::OkStatus() : absl::UnavailableError("down");
  }
  std::atomic<bool> serving{false};
  std::atomic<int> calls{0};
  absl::Duration last_timeout;
};

TEST(GatewayReadinessTest, NotReadyBeforeTheFirstCheck) {
  FakeHealthChecker checker;
  Readiness readiness(checker, absl::Seconds(1), absl::Milliseconds(300));
  EXPECT_FALSE(readiness.IsReady());
  EXPECT_EQ(readiness.ReadyzResponse().status, 503);
}

TEST(GatewayReadinessTest, FollowsTheVerifier) {
  FakeHealthChecker checker;
  Readiness readiness(checker, absl::Seconds(1), absl::Milliseconds(300));
  checker.serving = true;
  readiness.PollOnce();
  EXPECT_TRUE(readiness.IsReady());
  EXPECT_EQ(readiness.ReadyzResponse().status, 200);
  EXPECT_EQ(checker.last_timeout, absl::Milliseconds(300));
  checker.serving = false;
  readiness.PollOnce();
  EXPECT_FALSE(readiness.IsReady());
  const http::HttpResponse response = readiness.ReadyzResponse();
  EXPECT_EQ(response.status, 503);
  EXPECT_THAT(response.body, HasSubstr(R"("error":"not_ready")"));
}

TEST(GatewayReadinessTest, DrainingIsNeverReady) {
  FakeHealthChecker checker;
  checker.serving = true;
  Readiness readiness(checker, absl::Seconds(1), absl::Milliseconds(300));
  readiness.PollOnce();
  ASSERT_TRUE(readiness.IsReady()) << "ready before draining, or the 503 below proves nothing";
  readiness.SetDraining();
  EXPECT_FALSE(readiness.IsReady());
  EXPECT_EQ(readiness.ReadyzResponse().status, 503);
  readiness.PollOnce();
  EXPECT_FALSE(readiness.IsReady());
}

TEST(GatewayReadinessTest, PollerChecksAtStartAndStops) {
  FakeHealthChecker checker;
  checker.serving = true;
  Readiness readiness(checker, absl::Hours(1), absl::Milliseconds(300));
  readiness.Start();
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (!readiness.IsReady() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_TRUE(readiness.IsReady());
  readiness.Stop();  // Returns at once even though the interval is an hour.
  EXPECT_EQ(checker.calls.load(), 1);
}

TEST(GatewayReadinessTest, HealthzIsAlwaysOk) {
  const http::HttpResponse response = HealthzResponse();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, R"({"status":"ok"})");
}

TEST(GatewayGrpcHealthCheckerTest, AsksTheVerifiersHealthService) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  verifier::v1::Verifier::Service unimplemented;  // A server needs one service to start.
  builder.RegisterService(&unimplemented);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  GrpcHealthChecker checker(MakeVerifierChannel(absl::StrCat("127.0.0.1:", port)));
  EXPECT_TRUE(checker.Check(absl::Seconds(3)).ok());
  server->GetHealthCheckService()->SetServingStatus(false);
  EXPECT_EQ(checker.Check(absl::Seconds(3)).code(), absl::StatusCode::kUnavailable);
  server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
}

TEST(GatewayGrpcHealthCheckerTest, DeadVerifierIsNotServing) {
  GrpcHealthChecker checker(MakeVerifierChannel(absl::StrCat("127.0.0.1:", testing::UnusedPort())));
  EXPECT_FALSE(checker.Check(absl::Milliseconds(500)).ok());
}

}  // namespace
}  // namespace portcullis::gateway
