#include "ingest-gateway/src/grpc_verifier_client.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/ingest-gateway/http/test_http_client.h"

namespace portcullis::gateway {
namespace {

using verifier::v1::GetMentionRequest;
using verifier::v1::GetMentionResponse;
using verifier::v1::SubmitMentionRequest;
using verifier::v1::SubmitMentionResponse;

// An in-process verifier: accepts everything, knows one mention id, and never answers for "slow".
class TestVerifier final : public verifier::v1::Verifier::Service {
 public:
  // When set, SubmitMention and GetMention answer UNAUTHENTICATED to calls whose `authorization`
  // metadata is not exactly this.
  std::string required_authorization;

  grpc::Status Authenticate(const grpc::ServerContext* context) const {
    if (required_authorization.empty()) return grpc::Status::OK;
    const auto found = context->client_metadata().find("authorization");
    if (found == context->client_metadata().end() ||
        std::string(found->second.data(), found->second.size()) != required_authorization) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown token");
    }
    return grpc::Status::OK;
  }

  grpc::Status SubmitMention(grpc::ServerContext* context, const SubmitMentionRequest* request,
                             SubmitMentionResponse* response) override {
    if (grpc::Status auth = Authenticate(context); !auth.ok()) return auth;
    response->set_decision(verifier::v1::DECISION_ACCEPTED);
    response->set_mention_id(absl::StrCat("id-for-", request->source()));
    response->set_state(verifier::v1::MENTION_STATE_PENDING);
    return grpc::Status::OK;
  }

  grpc::Status GetMention(grpc::ServerContext* context, const GetMentionRequest* request,
                          GetMentionResponse* response) override {
    if (grpc::Status auth = Authenticate(context); !auth.ok()) return auth;
    if (request->mention_id() == "slow") {
      // Holds the call until the client gives up (its deadline cancels the call).
      while (!context->IsCancelled()) {
        absl::SleepFor(absl::Milliseconds(5));
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    if (request->mention_id() != "known") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such mention");
    }
    response->mutable_mention()->set_mention_id("known");
    return grpc::Status::OK;
  }

  // One mention of any site; INVALID_ARGUMENT without one.
  grpc::Status ListMentions(grpc::ServerContext*, const verifier::v1::ListMentionsRequest* request,
                            verifier::v1::ListMentionsResponse* response) override {
    if (request->domain().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "domain required");
    }
    response->add_mentions()->set_mention_id(absl::StrCat("of-", request->domain()));
    response->set_next_page_token("more");
    return grpc::Status::OK;
  }
};

class GatewayGrpcVerifierClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::EnableDefaultHealthCheckService(true);  // For AuthorizedHealthChecker.
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_NE(port_, 0);
  }

  void TearDown() override {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
  }

  std::unique_ptr<GrpcVerifierClient> Client(std::string target,
                                             absl::Duration timeout = absl::Seconds(5)) {
    return std::make_unique<GrpcVerifierClient>(MakeVerifierChannel(target), timeout);
  }

  template <typename Response>
  static absl::StatusOr<Response> Wait(
      const std::function<void(std::function<void(absl::StatusOr<Response>)>)>& call) {
    absl::Notification done;
    absl::StatusOr<Response> result = absl::UnknownError("no callback");
    call([&](absl::StatusOr<Response> got) {
      result = std::move(got);
      done.Notify();
    });
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
    return result;
  }

  absl::StatusOr<GetMentionResponse> Get(GrpcVerifierClient& client, std::string id) {
    GetMentionRequest request;
    request.set_mention_id(std::move(id));
    return Wait<GetMentionResponse>(
        [&](VerifierClient::GetCallback callback) { client.GetMention(request, callback); });
  }

  absl::StatusOr<SubmitMentionResponse> Submit(GrpcVerifierClient& client) {
    SubmitMentionRequest request;
    request.set_source("https://a.example/");
    request.set_target("https://b.example/");
    return Wait<SubmitMentionResponse>(
        [&](VerifierClient::SubmitCallback callback) { client.SubmitMention(request, callback); });
  }

  std::string Target() const { return absl::StrCat("127.0.0.1:", port_); }

  TestVerifier service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(GatewayGrpcVerifierClientTest, SubmitReturnsTheResponse) {
  auto client = Client(Target());
  absl::StatusOr<SubmitMentionResponse> response = Submit(*client);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->decision(), verifier::v1::DECISION_ACCEPTED);
  EXPECT_EQ(response->mention_id(), "id-for-https://a.example/");
}

TEST_F(GatewayGrpcVerifierClientTest, DnsSchemeTargetWorks) {
  auto client = Client(absl::StrCat("dns:///", Target()));
  EXPECT_TRUE(Submit(*client).ok());
}

TEST_F(GatewayGrpcVerifierClientTest, GetConvertsStatuses) {
  auto client = Client(Target());
  absl::StatusOr<GetMentionResponse> known = Get(*client, "known");
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_EQ(known->mention().mention_id(), "known");
  EXPECT_EQ(Get(*client, "unknown").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(GatewayGrpcVerifierClientTest, ListMentionsReturnsThePageAndConvertsStatuses) {
  auto client = Client(Target());
  const auto list = [&](const std::string& domain) {
    verifier::v1::ListMentionsRequest request;
    request.set_domain(domain);
    return Wait<verifier::v1::ListMentionsResponse>(
        [&](VerifierClient::ListMentionsCallback callback) {
          client->ListMentions(request, callback);
        });
  };
  absl::StatusOr<verifier::v1::ListMentionsResponse> page = list("b.example");
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->mentions_size(), 1);
  EXPECT_EQ(page->mentions(0).mention_id(), "of-b.example");
  EXPECT_EQ(page->next_page_token(), "more");
  EXPECT_EQ(list("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GatewayGrpcVerifierClientTest, EveryCallHasADeadline) {
  auto client = Client(Target(), absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  EXPECT_EQ(Get(*client, "slow").status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST_F(GatewayGrpcVerifierClientTest, DeadPortIsUnavailable) {
  auto client = Client(absl::StrCat("127.0.0.1:", testing::UnusedPort()), absl::Seconds(3));
  EXPECT_EQ(Submit(*client).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(GatewayGrpcVerifierClientTest, DestructionWaitsForCallsInFlight) {
  auto client = Client(Target(), absl::Milliseconds(200));
  std::atomic<bool> called{false};
  GetMentionRequest request;
  request.set_mention_id("slow");
  client->GetMention(request, [&](absl::StatusOr<GetMentionResponse>) { called = true; });
  client.reset();
  EXPECT_TRUE(called.load());
}

constexpr char kToken[] = "pct_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

TEST_F(GatewayGrpcVerifierClientTest, CallsCarryTheGatewayToken) {
  service_.required_authorization = std::string("Bearer ") + kToken;
  GrpcVerifierClient with_token(MakeVerifierChannel(absl::StrCat("127.0.0.1:", port_), kToken),
                                absl::Seconds(5));
  EXPECT_TRUE(Submit(with_token).ok());
  EXPECT_EQ(Get(with_token, "known").status().code(), absl::StatusCode::kOk);

  std::unique_ptr<GrpcVerifierClient> without = Client(absl::StrCat("127.0.0.1:", port_));
  // The verifier refusing the gateway's own token is not the sender's fault: it is passed on as
  // UNAVAILABLE (503 + Retry-After), so senders come back once the token is fixed.
  EXPECT_EQ(Submit(*without).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(GatewayGrpcVerifierClientTest, ReadinessNeedsAnAcceptedToken) {
  service_.required_authorization = std::string("Bearer ") + kToken;
  const std::string target = absl::StrCat("127.0.0.1:", port_);
  AuthorizedHealthChecker good(MakeVerifierChannel(target, kToken));
  EXPECT_TRUE(good.Check(absl::Seconds(5)).ok());

  AuthorizedHealthChecker wrong(MakeVerifierChannel(target, std::string("pct_") +
                                                                std::string(64, '0')));
  const absl::Status refused = wrong.Check(absl::Seconds(5));
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(std::string(refused.message()).find("pct_"), std::string::npos) << refused;
}

TEST_F(GatewayGrpcVerifierClientTest, ReadinessFailsWhileTheVerifierIsDown) {
  AuthorizedHealthChecker checker(
      MakeVerifierChannel(absl::StrCat("127.0.0.1:", testing::UnusedPort()), kToken));
  EXPECT_FALSE(checker.Check(absl::Milliseconds(300)).ok());
}

}  // namespace
}  // namespace portcullis::gateway
