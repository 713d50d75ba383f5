#include "verifier-service/src/server/verifier_server.h"
#include "verifier-service/src/verifier_flags.h"

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "tests/support/test_database.h"
#include "tests/verifier-service/server/test_tokens.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;
using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

VerifierConfig TestConfig(const std::string& database_url) {
  config::Texts flags;
  flags["database_url"] = database_url;
  flags["grpc_listen"] = "127.0.0.1:0";
  flags["tokens_file"] = test_tokens::TempTokensFile({test_tokens::ProcessToken()});
  flags["db_pool_size"] = "2";
  flags["health_interval"] = "50ms";
  flags["drain_timeout"] = "5s";
  flags["workers"] = "0";  // Tests that verify set their own.
  absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags, portcullis::config::NoEnvironment);
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(10);
}

// A real client of a real in-process server.
class VerifierServerTest : public ::testing::Test {
 protected:
  void Start(const std::string& database_url) { Start(TestConfig(database_url)); }

  void Start(const VerifierConfig& config, queue::MentionVerifier* verifier = nullptr) {
    absl::StatusOr<std::unique_ptr<VerifierServer>> server =
        VerifierServer::Start(config, nullptr, verifier);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_NE(server_->address().port, 0);
    channel_ =
        grpc::CreateChannel(server_->address().ToString(), grpc::InsecureChannelCredentials());
    stub_ = v1::Verifier::NewStub(channel_);
    health_ = Health::NewStub(channel_);
  }

  // The health status of `service`, or a gRPC error code as a negative number.
  int HealthOf(const std::string& service) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    HealthCheckRequest request;
    request.set_service(service);
    HealthCheckResponse response;
    const grpc::Status status = health_->Check(&context, request, &response);
    return status.ok() ? static_cast<int>(response.status()) : -status.error_code();
  }

  // Polls health until it reads `want` (the readiness thread pings every 50ms).
  bool WaitForHealth(const std::string& service, int want) {
    for (int i = 0; i < 200; ++i) {
      if (HealthOf(service) == want) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  grpc::Status Submit(const std::string& source, const std::string& target,
                      v1::SubmitMentionResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::SubmitMentionRequest request;
    request.set_source(source);
    request.set_target(target);
    return stub_->SubmitMention(&context, request, response);
  }

  grpc::Status AddSite(const std::string& domain) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::AddSiteRequest request;
    request.set_domain(domain);
    v1::AddSiteResponse response;
    return stub_->AddSite(&context, request, &response);
  }

  grpc::Status AddTarget(const std::string& url, v1::TargetKind kind) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::AddTargetRequest request;
    request.set_url(url);
    request.set_kind(kind);
    v1::AddTargetResponse response;
    return stub_->AddTarget(&context, request, &response);
  }

  grpc::Status GetMention(const std::string& id, v1::GetMentionResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    v1::GetMentionRequest request;
    request.set_mention_id(id);
    return stub_->GetMention(&context, request, response);
  }

  std::unique_ptr<VerifierServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Verifier::Stub> stub_;
  std::unique_ptr<Health::Stub> health_;
};

TEST_F(VerifierServerTest, ServesMentionsEndToEnd) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Start(db->connection_string());
  ASSERT_TRUE(WaitForHealth("", HealthCheckResponse::SERVING));
  EXPECT_EQ(HealthOf(kVerifierServiceName), HealthCheckResponse::SERVING);

  // Mentions of target.example are received once the site and the target are registered.
  v1::SubmitMentionResponse unserved;
  ASSERT_TRUE(Submit("https://source.example/post", "https://target.example/", &unserved).ok());
  EXPECT_EQ(unserved.reason(), "target_not_supported");
  ASSERT_TRUE(AddSite("target.example").ok());
  ASSERT_TRUE(Submit("https://source.example/post", "https://target.example/", &unserved).ok());
  EXPECT_EQ(unserved.reason(), "target_not_found");
  ASSERT_TRUE(AddTarget("https://target.example/", v1::TARGET_KIND_EXACT).ok());

  v1::SubmitMentionResponse first;
  grpc::Status status = Submit("https://source.example/post", "https://target.example/", &first);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(first.decision(), v1::DECISION_ACCEPTED);
  EXPECT_EQ(first.state(), v1::MENTION_STATE_PENDING);
  EXPECT_TRUE(first.created());
  EXPECT_FALSE(first.mention_id().empty());

  v1::SubmitMentionResponse repeat;
  status = Submit("HTTPS://Source.Example:443/post#c1", "https://target.example", &repeat);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(repeat.decision(), v1::DECISION_ACCEPTED);
  EXPECT_EQ(repeat.mention_id(), first.mention_id());
  EXPECT_FALSE(repeat.created());

  const std::pair<std::pair<const char*, const char*>, const char*> rejections[] = {
      {{"https://a.example/", "https://a.example/#x"}, "same_source_and_target"},
      {{"ftp://a.example/", "https://b.example/"}, "unsupported_scheme"},
      {{"https://u:p@a.example/", "https://b.example/"}, "credentials_in_url"},
      {{"not a url", "https://b.example/"}, "invalid_source"},
      {{"https://a.example/", ""}, "invalid_target"},
  };
  for (const auto& [urls, reason] : rejections) {
    v1::SubmitMentionResponse rejected;
    status = Submit(urls.first, urls.second, &rejected);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(rejected.decision(), v1::DECISION_REJECTED) << reason;
    EXPECT_EQ(rejected.reason(), reason);
  }

  v1::GetMentionResponse got;
  status = GetMention(first.mention_id(), &got);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(got.mention().mention_id(), first.mention_id());
  EXPECT_EQ(got.mention().source(), "https://source.example/post");
  EXPECT_EQ(got.mention().target(), "https://target.example/");
  EXPECT_EQ(got.mention().state(), v1::MENTION_STATE_PENDING);
  EXPECT_GT(got.mention().created_at().seconds(), 0);

  EXPECT_EQ(GetMention("nope", &got).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GetMention("00000000-0000-4000-8000-000000000000", &got).error_code(),
            grpc::StatusCode::NOT_FOUND);

  server_->Shutdown();
  EXPECT_TRUE(server_->fatal_error().ok());
}

// Says every source links to its target.
class AlwaysVerified final : public queue::MentionVerifier {
 public:
  queue::VerificationOutcome Verify(const store::JobRecord&) override {
    return queue::VerificationOutcome::Verified();
  }
};

TEST_F(VerifierServerTest, WorkersVerifyWhatIsSubmitted) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  VerifierConfig config = TestConfig(db->connection_string());
  config.workers = 2;
  AlwaysVerified verifier;
  Start(config, &verifier);
  ASSERT_TRUE(WaitForHealth("", HealthCheckResponse::SERVING));
  ASSERT_TRUE(AddSite("target.example").ok());
  ASSERT_TRUE(AddTarget("https://target.example/", v1::TARGET_KIND_PREFIX).ok());
  v1::SubmitMentionResponse submitted;
  ASSERT_TRUE(Submit("https://source.example/", "https://target.example/a", &submitted).ok());
  EXPECT_TRUE(submitted.queued());
  bool verified = false;
  for (int i = 0; i < 200 && !verified; ++i) {
    v1::GetMentionResponse got;
    verified = GetMention(submitted.mention_id(), &got).ok() &&
               got.mention().state() == v1::MENTION_STATE_VERIFIED;
    if (!verified) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_TRUE(verified);
  server_->Shutdown();
}

// Verifies every source as a reply by Alice, except sources ending in "/gone" (FAILED no_link,
// with a near miss) and "/like" (a like).
class ScriptedContent final : public queue::MentionVerifier {
 public:
  queue::VerificationOutcome Verify(const store::JobRecord& job) override {
    if (absl::EndsWith(job.source, "/gone")) {
      return queue::VerificationOutcome::Failed("no_link", {"https://target.example/a-10"});
    }
    store::MentionContent content;
    content.type = absl::EndsWith(job.source, "/like") ? "like" : "reply";
    content.author_name = "Alice";
    content.author_url = "https://source.example/";
    content.author_photo = "https://source.example/alice.jpg";
    content.published = "2024-05-01T10:00:00Z";
    content.url = job.source;
    content.content_text = "Hello";
    content.content_html = "<p>Hello</p>";
    return queue::VerificationOutcome::Verified(content);
  }
};

TEST_F(VerifierServerTest, ReadsVerifiedMentionsWithTheirContent) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  VerifierConfig config = TestConfig(db->connection_string());
  config.workers = 2;
  ScriptedContent verifier;
  Start(config, &verifier);
  ASSERT_TRUE(WaitForHealth("", HealthCheckResponse::SERVING));
  ASSERT_TRUE(AddSite("target.example").ok());
  ASSERT_TRUE(AddTarget("https://target.example/", v1::TARGET_KIND_PREFIX).ok());
  std::vector<std::string> ids;
  for (const char* source : {"https://source.example/reply", "https://source.example/like",
                             "https://source.example/gone"}) {
    v1::SubmitMentionResponse submitted;
    ASSERT_TRUE(Submit(source, "https://target.example/a#comments", &submitted).ok());
    ids.push_back(submitted.mention_id());
  }
  const auto settled = [&](const std::string& id) {
    for (int i = 0; i < 200; ++i) {
      v1::GetMentionResponse got;
      if (GetMention(id, &got).ok() && got.mention().state() != v1::MENTION_STATE_PENDING) {
        return got.mention();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return v1::Mention();
  };
  const v1::Mention reply = settled(ids[0]);
  EXPECT_EQ(reply.state(), v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(reply.type(), v1::MENTION_TYPE_REPLY);
  EXPECT_EQ(reply.author().name(), "Alice");
  EXPECT_EQ(reply.author().photo(), "https://source.example/alice.jpg");
  EXPECT_EQ(reply.content_html(), "<p>Hello</p>");
  EXPECT_EQ(reply.published(), "2024-05-01T10:00:00Z");
  EXPECT_TRUE(reply.has_verified_at());
  EXPECT_EQ(reply.attempts(), 1);
  EXPECT_EQ(settled(ids[1]).type(), v1::MENTION_TYPE_LIKE);
  const v1::Mention gone = settled(ids[2]);
  EXPECT_EQ(gone.state(), v1::MENTION_STATE_FAILED);
  EXPECT_EQ(gone.reason(), "no_link");
  ASSERT_EQ(gone.links_to_target_host_size(), 1);
  EXPECT_EQ(gone.links_to_target_host(0), "https://target.example/a-10");

  const auto list = [&](v1::ListMentionsRequest request, v1::ListMentionsResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(Deadline());
    return stub_->ListMentions(&context, request, response);
  };
  // By target (another spelling of the same key), VERIFIED only: the reply and the like.
  v1::ListMentionsRequest by_target;
  by_target.set_target("https://TARGET.example/a?utm_source=feed");
  by_target.set_state(v1::MENTION_STATE_VERIFIED);
  v1::ListMentionsResponse verified;
  grpc::Status status = list(by_target, &verified);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(verified.mentions_size(), 2);
  for (const v1::Mention& mention : verified.mentions()) {
    EXPECT_EQ(mention.state(), v1::MENTION_STATE_VERIFIED);
    EXPECT_EQ(mention.author().name(), "Alice");
  }
  // By site, likes only, one per page.
  v1::ListMentionsRequest likes;
  likes.set_domain("target.example");
  likes.set_type(v1::MENTION_TYPE_LIKE);
  v1::ListMentionsResponse liked;
  ASSERT_TRUE(list(likes, &liked).ok());
  ASSERT_EQ(liked.mentions_size(), 1);
  EXPECT_EQ(liked.mentions(0).mention_id(), ids[1]);
  // Paging through all three, one at a time.
  v1::ListMentionsRequest paged;
  paged.set_domain("target.example");
  paged.set_page_size(1);
  std::set<std::string> seen;
  for (int page = 0; page < 5; ++page) {
    v1::ListMentionsResponse response;
    ASSERT_TRUE(list(paged, &response).ok());
    for (const v1::Mention& mention : response.mentions()) {
      seen.insert(mention.mention_id());
    }
    if (response.next_page_token().empty()) {
      break;
    }
    paged.set_page_token(response.next_page_token());
  }
  EXPECT_EQ(seen, std::set<std::string>(ids.begin(), ids.end()));
  // Malformed requests never reach the database.
  v1::ListMentionsRequest neither;
  v1::ListMentionsResponse unused;
  EXPECT_EQ(list(neither, &unused).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::ListMentionsRequest bad_token;
  bad_token.set_domain("target.example");
  bad_token.set_page_token("garbage");
  EXPECT_EQ(list(bad_token, &unused).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  server_->Shutdown();
}

TEST_F(VerifierServerTest, WorkersWithoutAVerifierRunTheRealPipeline) {
  VerifierConfig config = TestConfig("host=/nonexistent/portcullis user=postgres dbname=none");
  config.workers = 1;
  absl::StatusOr<std::unique_ptr<VerifierServer>> server = VerifierServer::Start(config);
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->Shutdown();
}

TEST(VerifierServerTokensFileTest, AnUnusableTokensFileIsAStartupErrorNamingTheFlag) {
  VerifierConfig config = TestConfig("host=/nonexistent/portcullis user=postgres dbname=none");
  const std::string good = test_tokens::ProcessToken().FileLine();
  const std::string hash = test_tokens::ProcessToken().active.token_hash;
  const std::pair<const char*, std::string> bad[] = {
      {"/nonexistent/tokens", ""},
      {nullptr, "not a token line"},
      {nullptr, absl::StrCat(hash, " n root")},
      {nullptr, absl::StrCat(hash, " n read https://a.example/")},
      {nullptr, absl::StrCat(hash, " n read a.example,b c.example")},
  };
  for (const auto& [path, line] : bad) {
    if (path != nullptr) {
      config.tokens_file = path;
    } else {
      config.tokens_file = test_tokens::TempTokensFile({});
      std::ofstream(config.tokens_file, std::ios::app) << good << "\n" << line << "\n";
    }
    const absl::Status status = VerifierServer::Start(config).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << line << ": " << status;
    EXPECT_TRUE(absl::StartsWith(status.message(), "--tokens_file (TOKENS_FILE): ")) << status;
  }
}

TEST_F(VerifierServerTest, UnreachableDatabaseKeepsListeningNotServing) {
  Start("host=/nonexistent/portcullis user=postgres dbname=none");
  EXPECT_EQ(HealthOf(""), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(HealthOf(kVerifierServiceName), HealthCheckResponse::NOT_SERVING);
  v1::SubmitMentionResponse response;
  EXPECT_EQ(Submit("https://a.example/", "https://b.example/", &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // Not even a rejection: before the schema and the API tokens are loaded no call is authorized,
  // and "not ready" comes first (issue 9).
  EXPECT_EQ(Submit("ftp://a.example/", "https://b.example/", &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  server_->Shutdown();
  EXPECT_TRUE(server_->fatal_error().ok());
}

// Lists services through grpc.reflection.v1alpha (no stubs installed: a generic call with a
// hand-encoded ServerReflectionRequest{list_services: ""}) and returns the raw answer.
std::string ListServicesByReflection(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue queue;
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  context.set_deadline(Deadline());
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  void* tag = nullptr;
  bool ok = false;
  const auto step = [&](intptr_t want) {
    return queue.Next(&tag, &ok) && ok && reinterpret_cast<intptr_t>(tag) == want;
  };
  call->StartCall(reinterpret_cast<void*>(1));
  if (!step(1)) {
    return "";
  }
  const std::string request("\x3a\x00", 2);  // Field 7 (list_services), empty string.
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  call->Write(request_buffer, reinterpret_cast<void*>(2));
  grpc::ByteBuffer response_buffer;
  if (!step(2)) {
    return "";
  }
  call->Read(&response_buffer, reinterpret_cast<void*>(3));
  const bool read = step(3);
  call->WritesDone(reinterpret_cast<void*>(4));
  step(4);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(5);
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  std::vector<grpc::Slice> slices;
  std::string response;
  if (read && response_buffer.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) {
      response.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  return response;
}

TEST_F(VerifierServerTest, ServesReflection) {
  Start("host=/nonexistent/portcullis user=postgres dbname=none");
  const std::string services = ListServicesByReflection(channel_);
  EXPECT_NE(services.find("portcullis.verifier.v1.Verifier"), std::string::npos) << services;
  EXPECT_NE(services.find("grpc.health.v1.Health"), std::string::npos) << services;
}

TEST_F(VerifierServerTest, PortInUseIsAStartupError) {
  Start("host=/nonexistent/portcullis user=postgres dbname=none");
  VerifierConfig config = TestConfig("host=/nonexistent/portcullis user=postgres dbname=none");
  config.grpc_listen.port = server_->address().port;
  EXPECT_TRUE(absl::IsUnavailable(VerifierServer::Start(config).status()));
}

TEST_F(VerifierServerTest, NewerSchemaIsFatal) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  {
    absl::StatusOr<std::vector<store::Migration>> migrations = store::BuiltinMigrations();
    ASSERT_TRUE(migrations.ok());
    migrations->push_back({9999, "from_the_future", "SELECT 1;"});
    ASSERT_TRUE(store::Migrator(*migrations).Apply(db->connection_string()).ok());
  }
  absl::Notification gave_up;
  absl::StatusOr<std::unique_ptr<VerifierServer>> server =
      VerifierServer::Start(TestConfig(db->connection_string()), [&] { gave_up.Notify(); });
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(gave_up.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(absl::IsFailedPrecondition((*server)->fatal_error()));
  (*server)->Shutdown();
}

TEST_F(VerifierServerTest, MigrateWithRetryAppliesAndGivesUpOnADeadServer) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  EXPECT_TRUE(MigrateWithRetry(db->connection_string(), absl::Seconds(5)).ok());
  EXPECT_TRUE(MigrateWithRetry(db->connection_string(), absl::Seconds(5)).ok());
  EXPECT_TRUE(absl::IsUnavailable(MigrateWithRetry(
      "host=/nonexistent/portcullis user=postgres dbname=none", absl::Milliseconds(300))));
}

}  // namespace
}  // namespace portcullis::verifier::server
