// portcullis_verifier_grpc_requests_total on a real gRPC server on loopback: every answered RPC
// counted by method and code, unknown methods folded into "other".
#include "verifier-service/src/server/rpc_metrics.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/metrics/text_exposition.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"

namespace portcullis::verifier::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class VerifierRpcMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&verifier_);  // Implements nothing: UNIMPLEMENTED.
    builder.experimental().SetInterceptorCreators(MakeRpcMetricsInterceptors(registry_));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials());
  }

  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    }
  }

  static void Prepare(grpc::ClientContext& context) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    context.set_wait_for_ready(true);
  }

  grpc::StatusCode CheckHealth() {
    auto stub = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    Prepare(context);
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    return stub->Check(&context, request, &response).error_code();
  }

  grpc::StatusCode GetMention() {
    auto stub = v1::Verifier::NewStub(channel_);
    grpc::ClientContext context;
    Prepare(context);
    v1::GetMentionRequest request;
    v1::GetMentionResponse response;
    return stub->GetMention(&context, request, &response).error_code();
  }

  grpc::StatusCode CallUnknown(const std::string& method) {
    grpc::GenericStub stub(channel_);
    grpc::ClientContext context;
    Prepare(context);
    grpc::Slice empty("");  // An empty message (a default ByteBuffer is no message at all).
    grpc::ByteBuffer request(&empty, 1);
    grpc::ByteBuffer response;
    absl::Notification done;
    grpc::StatusCode code = grpc::StatusCode::OK;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status status) {
                     code = status.error_code();
                     done.Notify();
                   });
    done.WaitForNotification();
    return code;
  }

  std::string Scrape() const { return metrics::RenderText(registry_); }

  prometheus::Registry registry_;
  v1::Verifier::CallbackService verifier_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(VerifierRpcMetricsTest, CountsEveryAnsweredRpcByMethodAndCode) {
  ASSERT_EQ(CheckHealth(), grpc::StatusCode::OK);
  ASSERT_EQ(CheckHealth(), grpc::StatusCode::OK);
  ASSERT_EQ(GetMention(), grpc::StatusCode::UNIMPLEMENTED);
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_grpc_requests_total{code=\"OK\","
                              "method=\"/grpc.health.v1.Health/Check\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_grpc_requests_total{code=\"UNIMPLEMENTED\","
                              "method=\"/portcullis.verifier.v1.Verifier/GetMention\"} 1\n"));
}

TEST_F(VerifierRpcMetricsTest, UnknownMethodsDoNotMakeNewLabels) {
  for (const char* method :
       {"/made.Up/One", "/made.Up/Two", "/portcullis.verifier.v1.Verifier/Nope"}) {
    EXPECT_EQ(CallUnknown(method), grpc::StatusCode::UNIMPLEMENTED);
  }
  const std::string text = Scrape();
  EXPECT_THAT(text, Not(HasSubstr("made.Up")));
  EXPECT_THAT(text, Not(HasSubstr("Verifier/Nope")));
  EXPECT_THAT(text, HasSubstr("portcullis_verifier_grpc_requests_total{code=\"UNIMPLEMENTED\","
                              "method=\"other\"} 3\n"));
}

}  // namespace
}  // namespace portcullis::verifier::server
