#include "common/grpc/authorized_channel.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <condition_variable>
#include <vector>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace portcullis::grpc_client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kToken[] =
    "pct_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// A health service that answers SERVING and echoes every `authorization` value it received back
// in its initial metadata (as `echo-authorization`), so the client sees what went over the wire.
class EchoHealth final : public grpc::health::v1::Health::CallbackService {
 public:
  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* /*request*/,
                                  grpc::health::v1::HealthCheckResponse* response) override {
    const auto range = context->client_metadata().equal_range("authorization");
    for (auto it = range.first; it != range.second; ++it) {
      context->AddInitialMetadata("echo-authorization",
                                  std::string(it->second.data(), it->second.size()));
    }
    response->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

class AuthorizedChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }

  std::string Target() const { return "127.0.0.1:" + std::to_string(port_); }

  // One blocking Check on `channel`; the `authorization` values the server echoed.
  std::vector<std::string> EchoedAuthorization(const std::shared_ptr<grpc::Channel>& channel) {
    auto stub = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext context;
    context.set_wait_for_ready(true);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    const grpc::Status status = stub->Check(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return Echoed(context);
  }

  static std::vector<std::string> Echoed(const grpc::ClientContext& context) {
    std::vector<std::string> values;
    const auto range = context.GetServerInitialMetadata().equal_range("echo-authorization");
    for (auto it = range.first; it != range.second; ++it) {
      values.emplace_back(it->second.data(), it->second.size());
    }
    return values;
  }

  EchoHealth service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AuthorizedChannelTest, EveryCallCarriesTheBearerToken) {
  auto channel = CreateAuthorizedChannel(Target(), grpc::InsecureChannelCredentials(),
                                         grpc::ChannelArguments(), kToken);
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(EchoedAuthorization(channel), ElementsAre(std::string("Bearer ") + kToken));
  }
}

TEST_F(AuthorizedChannelTest, CallbackApiCallsCarryTheTokenToo) {
  auto channel = CreateAuthorizedChannel(Target(), grpc::InsecureChannelCredentials(),
                                         grpc::ChannelArguments(), kToken);
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub->async()->Check(&context, &request, &response, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    status = std::move(s);
    done = true;
    done_cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(done_cv.wait_for(lock, std::chrono::seconds(15), [&] { return done; }));
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(Echoed(context), ElementsAre(std::string("Bearer ") + kToken));
}

TEST_F(AuthorizedChannelTest, EmptyTokenSendsNoAuthorization) {
  auto channel = CreateAuthorizedChannel(Target(), grpc::InsecureChannelCredentials(),
                                         grpc::ChannelArguments(), "");
  EXPECT_THAT(EchoedAuthorization(channel), IsEmpty());
}

TEST_F(AuthorizedChannelTest, NullCredentialsMeanInsecure) {
  auto channel = CreateAuthorizedChannel(Target(), nullptr, grpc::ChannelArguments(), kToken);
  EXPECT_THAT(EchoedAuthorization(channel), ElementsAre(std::string("Bearer ") + kToken));
}

class TokenFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& contents) {
    const std::string path = ::testing::TempDir() + "/token-" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
    return path;
  }
};

TEST_F(TokenFileTest, TrimsSurroundingWhitespace) {
  auto token = ReadTokenFile(Write(std::string("  ") + kToken + "\n\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, kToken);
}

TEST_F(TokenFileTest, CommentLinesAreIgnored) {
  auto token = ReadTokenFile(Write(std::string("# example only: the dev gateway's token\n") +
                                   kToken + "\n  # rotated 2026-11\n"));
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, kToken);
  EXPECT_EQ(ReadTokenFile(Write("# only a comment\n")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TokenFileTest, MissingFileIsAClearError) {
  const std::string path = ::testing::TempDir() + "/no-such-token-file";
  std::remove(path.c_str());
  auto token = ReadTokenFile(path);
  ASSERT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(token.status().message()), HasSubstr(path));
}

TEST_F(TokenFileTest, EmptyOrBlankFileIsRefused) {
  for (const char* contents : {"", " \n\t\n"}) {
    auto token = ReadTokenFile(Write(contents));
    ASSERT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(token.status().message()), HasSubstr("empty"));
  }
}

TEST_F(TokenFileTest, TwoTokensAreRefusedWithoutEchoingThem) {
  auto token = ReadTokenFile(Write(std::string(kToken) + "\n" + kToken + "\n"));
  ASSERT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(token.status().message()), Not(HasSubstr("pct_")));
}

TEST_F(TokenFileTest, OversizedFileIsRefused) {
  auto token = ReadTokenFile(Write(std::string(5000, 'a')));
  ASSERT_EQ(token.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(token.status().message()), HasSubstr("larger than"));
}

}  // namespace
}  // namespace portcullis::grpc_client
