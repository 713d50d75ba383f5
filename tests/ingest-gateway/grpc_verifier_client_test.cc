#include "ingest-gateway/src/grpc_verifier_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/grpc/request_id.h"
#include "gmock/gmock.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "ingest-gateway/src/http/http_server.h"
#include "ingest-gateway/src/http/router.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "ingest-gateway/src/mentions_feed.h"
#include "ingest-gateway/src/webmention_handlers.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/ingest-gateway/http/test_http_client.h"

namespace portcullis::gateway {
namespace {

using verifier::v1::GetMentionRequest;
using verifier::v1::GetMentionResponse;
using verifier::v1::SubmitMentionRequest;
using verifier::v1::SubmitMentionResponse;

// An in-process verifier: accepts everything, knows one mention id, and never answers for "slow".
// Records the request id metadata of every call.
class TestVerifier final : public verifier::v1::Verifier::Service {
 public:
  // When set, every RPC fails with this status (message and binary details included).
  std::optional<grpc::Status> fail_with;

  // The kRequestIdMetadata of every call in arrival order ("<none>" when absent).
  std::vector<std::string> RequestIds() {
    std::lock_guard<std::mutex> lock(mu_);
    return request_ids_;
  }

  // Records the call's request id; the status to fail it with, or OK.
  grpc::Status Record(const grpc::ServerContext* context) {
    const auto found = context->client_metadata().find(grpc_metadata::kRequestIdMetadata);
    std::lock_guard<std::mutex> lock(mu_);
    request_ids_.push_back(found == context->client_metadata().end()
                               ? "<none>"
                               : std::string(found->second.data(), found->second.size()));
    return fail_with.value_or(grpc::Status::OK);
  }

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
    if (grpc::Status recorded = Record(context); !recorded.ok()) return recorded;
    if (grpc::Status auth = Authenticate(context); !auth.ok()) return auth;
    response->set_decision(verifier::v1::DECISION_ACCEPTED);
    response->set_mention_id(absl::StrCat("id-for-", request->source()));
    response->set_state(verifier::v1::MENTION_STATE_PENDING);
    return grpc::Status::OK;
  }

  grpc::Status GetMention(grpc::ServerContext* context, const GetMentionRequest* request,
                          GetMentionResponse* response) override {
    if (grpc::Status recorded = Record(context); !recorded.ok()) return recorded;
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
  grpc::Status ListMentions(grpc::ServerContext* context,
                            const verifier::v1::ListMentionsRequest* request,
                            verifier::v1::ListMentionsResponse* response) override {
    if (grpc::Status recorded = Record(context); !recorded.ok()) return recorded;
    if (request->domain().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "domain required");
    }
    response->add_mentions()->set_mention_id(absl::StrCat("of-", request->domain()));
    response->set_next_page_token("more");
    return grpc::Status::OK;
  }

  // When false (the default), the batch calls are UNIMPLEMENTED, as on a verifier older than
  // issue 21: the client falls back to single calls (which the other tests go through).
  bool batch_calls = false;
  // When set, the first SubmitMentions call waits for it before answering.
  absl::Notification* hold_first_batch = nullptr;

  // Items per SubmitMentions / EvaluateIngestBatch call, in arrival order.
  std::vector<int> BatchSizes() {
    std::lock_guard<std::mutex> lock(mu_);
    return batch_sizes_;
  }

  // Answers each item as SubmitMention would; a source "https://refused.example/" is refused
  // RESOURCE_EXHAUSTED (that item only).
  grpc::Status SubmitMentions(grpc::ServerContext* context,
                              const verifier::v1::SubmitMentionsRequest* request,
                              verifier::v1::SubmitMentionsResponse* response) override {
    if (!batch_calls) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method");
    }
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      first = batch_sizes_.empty();
      batch_sizes_.push_back(request->items_size());
    }
    if (first && hold_first_batch != nullptr) {
      hold_first_batch->WaitForNotification();
    }
    if (grpc::Status auth = Authenticate(context); !auth.ok()) return auth;
    for (const verifier::v1::SubmitMentionsItem& item : request->items()) {
      verifier::v1::SubmitMentionsResult* result = response->add_results();
      if (item.mention().source() == "https://refused.example/") {
        result->mutable_status()->set_code(grpc::StatusCode::RESOURCE_EXHAUSTED);
        result->mutable_status()->set_message("too many pending mentions from this host");
        continue;
      }
      result->mutable_mention()->set_decision(verifier::v1::DECISION_ACCEPTED);
      result->mutable_mention()->set_mention_id(
          absl::StrCat("id-for-", item.mention().source(), "-", item.request_id()));
    }
    return grpc::Status::OK;
  }

  grpc::Status EvaluateIngestBatch(grpc::ServerContext* /*context*/,
                                   const verifier::v1::EvaluateIngestBatchRequest* request,
                                   verifier::v1::EvaluateIngestBatchResponse* response) override {
    if (!batch_calls) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch_sizes_.push_back(request->items_size());
    }
    for (const verifier::v1::EvaluateIngestBatchItem& item : request->items()) {
      verifier::v1::EvaluateIngestBatchResult* result = response->add_results();
      result->mutable_decision()->set_decision(verifier::v1::INGEST_DECISION_ACCEPTED);
      result->mutable_decision()->set_item_id(item.item().item_id());
    }
    return grpc::Status::OK;
  }

  grpc::Status EvaluateIngest(grpc::ServerContext* context,
                              const verifier::v1::EvaluateIngestRequest* request,
                              verifier::v1::EvaluateIngestResponse* response) override {
    if (grpc::Status recorded = Record(context); !recorded.ok()) return recorded;
    response->set_decision(verifier::v1::INGEST_DECISION_ACCEPTED);
    response->set_item_id(request->item_id());
    return grpc::Status::OK;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> request_ids_;
  std::vector<int> batch_sizes_;
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
        [&](VerifierClient::GetCallback callback) { client.GetMention("", request, callback); });
  }

  absl::StatusOr<SubmitMentionResponse> Submit(GrpcVerifierClient& client) {
    SubmitMentionRequest request;
    request.set_source("https://a.example/");
    request.set_target("https://b.example/");
    return Wait<SubmitMentionResponse>([&](VerifierClient::SubmitCallback callback) {
      client.SubmitMention("", request, callback);
    });
  }

  std::string Target() const { return absl::StrCat("127.0.0.1:", port_); }

  TestVerifier service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

// A loopback TCP relay to `port` that reads nothing the server sends for the first `delay` of
// each connection (it waits in the kernel's buffers): a verifier whose handshake (here the HTTP/2
// SETTINGS) is slow, as a busy one's TLS handshake is.
class SlowHandshakeRelay {
 public:
  SlowHandshakeRelay(int port, absl::Duration delay) : target_port_(port), delay_(delay) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = Loopback(0);
    socklen_t length = sizeof(address);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(listener_, 8) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      ADD_FAILURE() << "relay: cannot listen";
      return;
    }
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~SlowHandshakeRelay() {
    stopping_ = true;
    shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    for (std::thread& relay : relays_) relay.join();
    close(listener_);
  }

  int port() const { return port_; }

 private:
  static sockaddr_in Loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    return address;
  }

  // Moves what `from` has to `to`; false when either side is done.
  static bool Forward(int from, int to) {
    char buffer[16384];
    const ssize_t n = recv(from, buffer, sizeof(buffer), 0);
    return n > 0 && send(to, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
  }

  void Accept() {
    for (;;) {
      const int client = accept(listener_, nullptr, nullptr);
      if (client < 0) return;  // Shut down.
      relays_.emplace_back([this, client] { Relay(client); });
    }
  }

  void Relay(int client) {
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in address = Loopback(target_port_);
    const absl::Time open_at = absl::Now() + delay_;
    if (connect(server, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
      while (!stopping_) {
        const bool open = absl::Now() >= open_at;
        pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
        if (poll(fds, open ? 2 : 1, 20) < 0) break;
        if (fds[0].revents != 0 && !Forward(client, server)) break;
        if (open && fds[1].revents != 0 && !Forward(server, client)) break;
      }
    }
    close(server);
    close(client);
  }

  const int target_port_;
  const absl::Duration delay_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::vector<std::thread> relays_;  // Touched by the acceptor only, until it is joined.
};

TEST_F(GatewayGrpcVerifierClientTest, ASlowHandshakeIsWaitedForNotAnswered503) {
  // 400 ms is far longer than a loopback handshake and far shorter than a call's deadline.
  SlowHandshakeRelay relay(port_, absl::Milliseconds(400));
  auto client = Client(absl::StrCat("127.0.0.1:", relay.port()));
  absl::StatusOr<SubmitMentionResponse> response = Submit(*client);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->decision(), verifier::v1::DECISION_ACCEPTED);
}

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
          client->ListMentions("", request, callback);
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
  client->GetMention("", request, [&](absl::StatusOr<GetMentionResponse>) { called = true; });
  client.reset();
  EXPECT_TRUE(called.load());
}

TEST_F(GatewayGrpcVerifierClientTest, ConcurrentSubmissionsShareOneCallAndEachGetsItsOwnAnswer) {
  service_.batch_calls = true;
  absl::Notification release;
  service_.hold_first_batch = &release;
  GrpcVerifierClient client(MakeVerifierChannel(Target()), absl::Seconds(10),
                            {.max_calls_in_flight = 1});
  constexpr int kSubmissions = 50;
  std::mutex mu;
  std::vector<absl::StatusOr<SubmitMentionResponse>> answers(kSubmissions,
                                                             absl::UnknownError("none"));
  absl::BlockingCounter answered(kSubmissions);
  for (int i = 0; i < kSubmissions; ++i) {
    SubmitMentionRequest request;
    request.set_source(i == 7 ? "https://refused.example/" : absl::StrCat("https://a.example/", i));
    request.set_target("https://b.example/");
    client.SubmitMention(absl::StrCat("req-", i), request,
                         [&, i](absl::StatusOr<SubmitMentionResponse> answer) {
                           {
                             std::lock_guard<std::mutex> lock(mu);
                             answers[i] = std::move(answer);
                           }
                           answered.DecrementCount();
                         });
    if (i == 0) {
      // The first is sent at once, alone; wait until the verifier holds it.
      for (int spin = 0; spin < 1000 && service_.BatchSizes().empty(); ++spin) {
        absl::SleepFor(absl::Milliseconds(5));
      }
    }
  }
  release.Notify();
  answered.Wait();
  EXPECT_THAT(service_.BatchSizes(), ::testing::ElementsAre(1, kSubmissions - 1))
      << "the 49 that came while the first call was in flight went as one call";
  for (int i = 0; i < kSubmissions; ++i) {
    if (i == 7) {
      EXPECT_EQ(answers[i].status().code(), absl::StatusCode::kResourceExhausted)
          << "a per-item refusal reaches that item only";
      continue;
    }
    ASSERT_TRUE(answers[i].ok()) << i << ": " << answers[i].status();
    EXPECT_EQ(answers[i]->mention_id(), absl::StrCat("id-for-https://a.example/", i, "-req-", i))
        << "each submission gets its own answer, with its own request id";
  }
}

TEST_F(GatewayGrpcVerifierClientTest, AFailedBatchCallFailsEachItemAsASingleCallWould) {
  service_.batch_calls = true;
  service_.required_authorization = "Bearer pct_other";
  auto client = Client(Target());
  // The verifier refusing the gateway's own token: UNAVAILABLE (503 + Retry-After) per item,
  // as for a single call (CallsCarryTheGatewayToken).
  EXPECT_EQ(Submit(*client).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(service_.BatchSizes(), ::testing::ElementsAre(1));
}

TEST_F(GatewayGrpcVerifierClientTest, IngestDeliveriesGoAsEvaluateIngestBatch) {
  service_.batch_calls = true;
  auto client = Client(Target());
  verifier::v1::EvaluateIngestRequest evaluate;
  evaluate.set_item_id("item-1");
  absl::StatusOr<verifier::v1::EvaluateIngestResponse> answer =
      Wait<verifier::v1::EvaluateIngestResponse>(
          [&](VerifierClient::EvaluateIngestCallback callback) {
            client->EvaluateIngest("req-ingest", evaluate, callback);
          });
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->decision(), verifier::v1::INGEST_DECISION_ACCEPTED);
  EXPECT_EQ(answer->item_id(), "item-1");
  EXPECT_THAT(service_.BatchSizes(), ::testing::ElementsAre(1));
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

TEST_F(GatewayGrpcVerifierClientTest, EveryCallCarriesItsRequestId) {
  auto client = Client(Target());
  SubmitMentionRequest submit;
  EXPECT_TRUE(Wait<SubmitMentionResponse>([&](VerifierClient::SubmitCallback callback) {
                client->SubmitMention("req-submit", submit, callback);
              }).ok());
  GetMentionRequest get;
  get.set_mention_id("known");
  EXPECT_TRUE(Wait<GetMentionResponse>([&](VerifierClient::GetCallback callback) {
                client->GetMention("req-get", get, callback);
              }).ok());
  verifier::v1::EvaluateIngestRequest evaluate;
  EXPECT_TRUE(Wait<verifier::v1::EvaluateIngestResponse>([&](VerifierClient::EvaluateIngestCallback
                                                                 callback) {
                client->EvaluateIngest("req-ingest", evaluate, callback);
              }).ok());
  verifier::v1::ListMentionsRequest list;
  list.set_domain("b.example");
  EXPECT_TRUE(
      Wait<verifier::v1::ListMentionsResponse>([&](VerifierClient::ListMentionsCallback callback) {
        client->ListMentions("req-list", list, callback);
      }).ok());
  EXPECT_THAT(service_.RequestIds(),
              ::testing::ElementsAre("req-submit", "req-get", "req-ingest", "req-list"));
}

// The public listener's routes over a real GrpcVerifierClient and the in-process verifier.
class GatewayRequestIdAcrossTheHopTest : public GatewayGrpcVerifierClientTest {
 protected:
  void SetUp() override {
    GatewayGrpcVerifierClientTest::SetUp();
    client_ = Client(Target());
    webmention_ = std::make_unique<WebmentionHandlers>(*client_, 5);
    ingest_ = std::make_unique<IngestHandler>(*client_, IngestHandler::Options{});
    mentions_ = std::make_unique<MentionsFeed>(*client_, 5);
    router_.Add("POST", kWebmentionPath, [this](const http::HttpRequest& r, http::Respond done) {
      webmention_->Submit(r, std::move(done));
    });
    router_.Add("GET", kStatusRoute, [this](const http::HttpRequest& r, http::Respond done) {
      webmention_->Status(r, std::move(done));
    });
    router_.Add("POST", kIngestPath, [this](const http::HttpRequest& r, http::Respond done) {
      ingest_->Handle(r, std::move(done));
    });
    router_.Add("GET", kMentionsPath, [this](const http::HttpRequest& r, http::Respond done) {
      mentions_->Handle(r, std::move(done));
    });
    http::HttpServerOptions options;
    options.listen = config::HostPort{"127.0.0.1", 0};
    absl::StatusOr<std::unique_ptr<http::HttpServer>> server =
        http::HttpServer::Create(options, router_.AsHandler());
    ASSERT_TRUE(server.ok()) << server.status();
    http_ = *std::move(server);
    http_->Start();
  }

  void TearDown() override {
    http_->Stop();
    client_.reset();
    GatewayGrpcVerifierClientTest::TearDown();
  }

  // One request of each route, with `extra_headers`; the responses.
  std::vector<testing::TestResponse> EveryRoute(absl::string_view extra_headers) {
    std::vector<testing::TestResponse> responses;
    const auto send = [&](absl::string_view method, absl::string_view target,
                          absl::string_view body, std::string headers) {
      testing::TestConnection connection(http_->port());
      std::optional<testing::TestResponse> response =
          connection.Request(method, target, body, absl::StrCat(headers, extra_headers));
      EXPECT_TRUE(response.has_value()) << method << " " << target;
      responses.push_back(response.value_or(testing::TestResponse{}));
    };
    send("POST", "/webmention",
         "source=https%3A%2F%2Fa.example%2F&target=https%3A%2F%2Fb.example%2F",
         "Content-Type: application/x-www-form-urlencoded\r\n");
    send("GET", "/webmention/status/0b6e3f5e", "", "");
    send("POST", "/ingest", R"({"id":"item-1"})",
         "Content-Type: application/json\r\nX-Provenance-Source: feeds.example\r\n");
    send("GET", "/mentions?site=b.example", "", "");
    return responses;
  }

  std::unique_ptr<GrpcVerifierClient> client_;
  std::unique_ptr<WebmentionHandlers> webmention_;
  std::unique_ptr<IngestHandler> ingest_;
  std::unique_ptr<MentionsFeed> mentions_;
  http::Router router_;
  std::unique_ptr<http::HttpServer> http_;
};

TEST_F(GatewayRequestIdAcrossTheHopTest, TheVerifierGetsTheIdTheSenderSees) {
  // A sender's own id is echoed and sent on.
  for (const testing::TestResponse& response : EveryRoute("X-Request-Id: sender-id-7\r\n")) {
    EXPECT_EQ(response.Header("x-request-id"), "sender-id-7");
  }
  EXPECT_THAT(service_.RequestIds(), ::testing::Each("sender-id-7"));
  EXPECT_EQ(service_.RequestIds().size(), 4u);

  // Without one, the id the gateway made up is the one the verifier gets.
  const std::vector<testing::TestResponse> responses = EveryRoute("");
  const std::vector<std::string> ids = service_.RequestIds();
  ASSERT_EQ(ids.size(), 8u);
  for (size_t i = 0; i < responses.size(); ++i) {
    EXPECT_FALSE(responses[i].Header("x-request-id").empty());
    EXPECT_EQ(ids[4 + i], responses[i].Header("x-request-id")) << i;
  }
}

TEST_F(GatewayRequestIdAcrossTheHopTest, TheVerifiersErrorDebugInfoNeverReachesABody) {
  for (const grpc::StatusCode code :
       {grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::INTERNAL,
        grpc::StatusCode::DEADLINE_EXCEEDED, grpc::StatusCode::FAILED_PRECONDITION,
        grpc::StatusCode::UNAUTHENTICATED, grpc::StatusCode::PERMISSION_DENIED}) {
    service_.fail_with = grpc::Status(
        code, "pg at 10.9.8.7:5432 refused; request_id=sender-id-9 store=PgMentionStore",
        "debug-details-d41d8cd9");
    for (const testing::TestResponse& response : EveryRoute("X-Request-Id: sender-id-9\r\n")) {
      SCOPED_TRACE(absl::StrCat("code ", static_cast<int>(code), ": ", response.body));
      EXPECT_GE(response.status, 400);
      EXPECT_NE(response.status, 401);
      EXPECT_THAT(response.body, ::testing::Not(::testing::HasSubstr("10.9.8.7")));
      EXPECT_THAT(response.body, ::testing::Not(::testing::HasSubstr("PgMentionStore")));
      EXPECT_THAT(response.body, ::testing::Not(::testing::HasSubstr("sender-id-9")));
      EXPECT_THAT(response.body, ::testing::Not(::testing::HasSubstr("debug-details")));
      EXPECT_THAT(response.body, ::testing::HasSubstr("\"error_description\""));
    }
  }
}

}  // namespace
}  // namespace portcullis::gateway
