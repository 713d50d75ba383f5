// Authentication, scopes and site bindings of every verifier RPC (issue 9), through a real
// in-process VerifierServer on loopback and a real PostgreSQL: one row per RPC.
#include "verifier-service/src/server/authorized_call.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging/log.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "portcullis/verifier/v1/verifier.grpc.pb.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "tests/verifier-service/server/test_tokens.h"
#include "verifier-service/src/server/verifier_server.h"
#include "verifier-service/src/verifier_flags.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;
using test_tokens::TestToken;
using Stub = v1::Verifier::Stub;

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(10);
}

constexpr char kUnknownUuid[] = "0b6a4a8e-3f0e-4c1a-9a57-2f1d2c3b4a5e";

// One RPC with a request that is well formed enough to reach its store (or its own answer).
struct RpcCase {
  const char* name;
  Access access;
  std::function<grpc::Status(Stub&, grpc::ClientContext&)> call;
};

template <typename Request, typename Response>
std::function<grpc::Status(Stub&, grpc::ClientContext&)> Unary(
    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
    Request request) {
  return [method, request](Stub& stub, grpc::ClientContext& context) {
    Response response;
    return (stub.*method)(&context, request, &response);
  };
}

template <typename Request>
Request Make(const std::function<void(Request&)>& fill) {
  Request request;
  fill(request);
  return request;
}

// Every RPC of the Verifier service, each on site a.example where it names one.
std::vector<RpcCase> EveryRpc() {
  return {
      {"SubmitMention", kSubmitAccess,
       Unary(&Stub::SubmitMention, Make<v1::SubmitMentionRequest>([](auto& r) {
               r.set_source("https://source.example/a");
               r.set_target("https://a.example/post");
             }))},
      {"EvaluateIngest", kIngestAccess,
       Unary(&Stub::EvaluateIngest, Make<v1::EvaluateIngestRequest>([](auto& r) {
               r.set_publisher("feed.example");
               r.set_raw_body("{}");
               r.set_item_id("item-1");
             }))},
      {"SubmitMentions", kSubmitAccess,
       Unary(&Stub::SubmitMentions, Make<v1::SubmitMentionsRequest>([](auto& r) {
               v1::SubmitMentionRequest* mention = r.add_items()->mutable_mention();
               mention->set_source("https://source.example/batch");
               mention->set_target("https://a.example/post");
             }))},
      {"EvaluateIngestBatch", kIngestAccess,
       Unary(&Stub::EvaluateIngestBatch, Make<v1::EvaluateIngestBatchRequest>([](auto& r) {
               v1::EvaluateIngestRequest* item = r.add_items()->mutable_item();
               item->set_publisher("feed.example");
               item->set_raw_body("{}");
               item->set_item_id("item-1");
             }))},
      {"GetMention", kReadAccess,
       Unary(&Stub::GetMention,
             Make<v1::GetMentionRequest>([](auto& r) { r.set_mention_id(kUnknownUuid); }))},
      {"ListMentions", kReadAccess,
       Unary(&Stub::ListMentions,
             Make<v1::ListMentionsRequest>([](auto& r) { r.set_domain("a.example"); }))},
      {"CheckUrl", kFetchAccess,
       Unary(&Stub::CheckUrl,
             Make<v1::CheckUrlRequest>([](auto& r) { r.set_url("http://127.0.0.1/"); }))},
      {"SafeFetch", kFetchAccess,
       Unary(&Stub::SafeFetch,
             Make<v1::SafeFetchRequest>([](auto& r) { r.set_url("http://127.0.0.1/"); }))},
      {"AddSite", kAdminAccess,
       Unary(&Stub::AddSite, Make<v1::AddSiteRequest>([](auto& r) { r.set_domain("a.example"); }))},
      {"ListSites", kAdminAccess, Unary(&Stub::ListSites, v1::ListSitesRequest())},
      {"RemoveSite", kAdminAccess,
       Unary(&Stub::RemoveSite,
             Make<v1::RemoveSiteRequest>([](auto& r) { r.set_domain("a.example"); /* The AddSite row adds it again. */ }))},
      {"AddTarget", kAdminAccess,
       Unary(&Stub::AddTarget, Make<v1::AddTargetRequest>([](auto& r) {
               r.set_url("https://a.example/");
               r.set_kind(v1::TARGET_KIND_PREFIX);
             }))},
      {"ImportTargets", kAdminAccess,
       Unary(&Stub::ImportTargets, Make<v1::ImportTargetsRequest>([](auto& r) {
               v1::AddTargetRequest* target = r.add_targets();
               target->set_url("https://a.example/");
               target->set_kind(v1::TARGET_KIND_PREFIX);
             }))},
      {"ListTargets", kAdminAccess, Unary(&Stub::ListTargets, v1::ListTargetsRequest())},
      {"RemoveTarget", kAdminAccess,
       Unary(&Stub::RemoveTarget, Make<v1::RemoveTargetRequest>([](auto& r) {
               r.set_url("https://a.example/none/");
               r.set_kind(v1::TARGET_KIND_PREFIX);
             }))},
      {"VerifyNow", kAdminAccess,
       Unary(&Stub::VerifyNow, Make<v1::VerifyNowRequest>([](auto& r) {
               r.set_source("https://source.example/a");
               r.set_target("https://a.example/unregistered-site-is-rejected");
             }))},
      {"AddBlock", kAdminAccess, Unary(&Stub::AddBlock, Make<v1::AddBlockRequest>([](auto& r) {
                                   r.mutable_block()->set_site("a.example");
                                   r.mutable_block()->set_kind(v1::BLOCK_KIND_DOMAIN);
                                   r.mutable_block()->set_value("spam-a.example");
                                 }))},
      {"ListBlocks", kAdminAccess,
       Unary(&Stub::ListBlocks,
             Make<v1::ListBlocksRequest>([](auto& r) { r.set_site("a.example"); }))},
      {"RemoveBlock", kAdminAccess,
       Unary(&Stub::RemoveBlock, Make<v1::RemoveBlockRequest>([](auto& r) {
               r.mutable_block()->set_site("a.example");
               r.mutable_block()->set_kind(v1::BLOCK_KIND_DOMAIN);
               r.mutable_block()->set_value("never-blocked.example");
             }))},
      {"AddPublisher", kUnboundAdminAccess,
       Unary(&Stub::AddPublisher, Make<v1::AddPublisherRequest>([](auto& r) {
               r.mutable_publisher()->set_name("feed.example");
             }))},
      {"ListPublishers", kUnboundAdminAccess,
       Unary(&Stub::ListPublishers, v1::ListPublishersRequest())},
      {"SetPublisherEnabled", kUnboundAdminAccess,
       Unary(&Stub::SetPublisherEnabled, Make<v1::SetPublisherEnabledRequest>([](auto& r) {
               r.set_name("nobody.example");
               r.set_enabled(true);
             }))},
      {"AddPublisherKey", kUnboundAdminAccess,
       Unary(&Stub::AddPublisherKey, Make<v1::AddPublisherKeyRequest>([](auto& r) {
               r.set_publisher("nobody.example");
               r.set_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
             }))},
      {"RevokePublisherKey", kUnboundAdminAccess,
       Unary(&Stub::RevokePublisherKey, Make<v1::RevokePublisherKeyRequest>([](auto& r) {
               r.set_publisher("nobody.example");
               r.set_key_id(kUnknownUuid);
             }))},
      {"ListDeadLetters", kUnboundAdminAccess,
       Unary(&Stub::ListDeadLetters, v1::ListDeadLettersRequest())},
      {"ReplayDeadLetter", kUnboundAdminAccess,
       Unary(&Stub::ReplayDeadLetter, Make<v1::ReplayDeadLetterRequest>([](auto& r) {
               r.set_dead_letter_id(kUnknownUuid);
             }))},
      {"DiscardDeadLetter", kUnboundAdminAccess,
       Unary(&Stub::DiscardDeadLetter, Make<v1::DiscardDeadLetterRequest>([](auto& r) {
               r.set_dead_letter_id(kUnknownUuid);
             }))},
      {"Erase", kAdminAccess, Unary(&Stub::Erase, Make<v1::EraseRequest>([](auto& r) {
                                r.set_source_host("never-erased.example");
                                r.set_dry_run(true);
                              }))},
      {"CreateSubscription", kAdminAccess,
       Unary(&Stub::CreateSubscription, Make<v1::CreateSubscriptionRequest>([](auto& r) {
               r.set_site("a.example");
               r.set_url("http://93.184.216.34/hook");
               r.add_events("mention.verified");
               r.set_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
             }))},
      {"ListSubscriptions", kAdminAccess,
       Unary(&Stub::ListSubscriptions, Make<v1::ListSubscriptionsRequest>(
                                           [](auto& r) { r.set_site("a.example"); }))},
      {"RemoveSubscription", kAdminAccess,
       Unary(&Stub::RemoveSubscription, Make<v1::RemoveSubscriptionRequest>([](auto& r) {
               r.set_subscription_id("00000000-0000-4000-8000-000000000000");
             }))},
      {"SendTestEvent", kAdminAccess,
       Unary(&Stub::SendTestEvent, Make<v1::SendTestEventRequest>([](auto& r) {
               r.set_subscription_id("00000000-0000-4000-8000-000000000000");
             }))},
      {"ListDeliveries", kAdminAccess,
       Unary(&Stub::ListDeliveries, Make<v1::ListDeliveriesRequest>([](auto& r) {
               r.set_subscription_id("00000000-0000-4000-8000-000000000000");
             }))},
      {"ReplayDeliveries", kAdminAccess,
       Unary(&Stub::ReplayDeliveries, Make<v1::ReplayDeliveriesRequest>([](auto& r) {
               r.set_subscription_id("00000000-0000-4000-8000-000000000000");
               r.set_dry_run(true);
             }))},
      {"ListAcceptedItems", kUnboundAdminAccess,
       Unary(&Stub::ListAcceptedItems, v1::ListAcceptedItemsRequest())},
      {"UpdatePublisher", kUnboundAdminAccess,
       Unary(&Stub::UpdatePublisher, Make<v1::UpdatePublisherRequest>([](auto& r) {
               r.set_name("nobody.example");
               r.set_keep_drops_seconds(3600);
             }))},
      {"ListDrops", kUnboundAdminAccess,
       Unary(&Stub::ListDrops,
             Make<v1::ListDropsRequest>([](auto& r) { r.set_publisher("nobody.example"); }))},
      {"ReevaluateDrops", kUnboundAdminAccess,
       Unary(&Stub::ReevaluateDrops, Make<v1::ReevaluateDropsRequest>([](auto& r) {
               r.set_publisher("nobody.example");
               r.set_dry_run(true);
             }))},
      {"CreateToken", kUnboundAdminAccess,
       Unary(&Stub::CreateToken, Make<v1::CreateTokenRequest>([](auto& r) {
               r.set_name("made-by-the-table");
               r.add_scopes("read");
             }))},
      {"ListTokens", kUnboundAdminAccess, Unary(&Stub::ListTokens, v1::ListTokensRequest())},
      {"RevokeToken", kUnboundAdminAccess,
       Unary(&Stub::RevokeToken,
             Make<v1::RevokeTokenRequest>([](auto& r) { r.set_id(kUnknownUuid); }))},
      {"ListPublicMentions", kReadAccess,
       Unary(&Stub::ListPublicMentions,
             Make<v1::ListPublicMentionsRequest>([](auto& r) { r.set_domain("a.example"); }))},
      {"CountPublicMentions", kReadAccess,
       Unary(&Stub::CountPublicMentions, Make<v1::CountPublicMentionsRequest>([](auto& r) {
               r.add_targets("https://a.example/post");
             }))},
      {"ListMentionChanges", kReadAccess,
       Unary(&Stub::ListMentionChanges,
             Make<v1::ListMentionChangesRequest>([](auto& r) { r.set_domain("a.example"); }))},
      {"ExportMentions", kAdminAccess,
       Unary(&Stub::ExportMentions,
             Make<v1::ExportMentionsRequest>([](auto& r) { r.set_domain("a.example"); }))},
      {"ImportMentions", kAdminAccess,
       Unary(&Stub::ImportMentions, Make<v1::ImportMentionsRequest>([](auto& r) {
               v1::Mention* mention = r.add_mentions();
               mention->set_source("https://source.example/a");
               mention->set_target("https://a.example/post");
               mention->mutable_created_at()->set_seconds(1700000000);
             }))},
      // Moderation (issue 16): the review scope, which admin includes; policies are admin's.
      {"ReviewMention", kReviewAccess,
       Unary(&Stub::ReviewMention, Make<v1::ReviewMentionRequest>([](auto& r) {
               r.set_mention_id(kUnknownUuid);
               r.set_action(v1::REVIEW_ACTION_HIDE);
             }))},
      {"ListReviewQueue", kReviewAccess,
       Unary(&Stub::ListReviewQueue,
             Make<v1::ListReviewQueueRequest>([](auto& r) { r.set_site("a.example"); }))},
      {"AddApprovalRule", kReviewAccess,
       Unary(&Stub::AddApprovalRule, Make<v1::AddApprovalRuleRequest>([](auto& r) {
               r.mutable_rule()->set_site("a.example");
               r.mutable_rule()->set_kind(v1::APPROVAL_RULE_KIND_AUTHOR_URL);
               r.mutable_rule()->set_value("https://author.example/");
               r.set_dry_run(true);
             }))},
      {"ListApprovalRules", kReviewAccess,
       Unary(&Stub::ListApprovalRules,
             Make<v1::ListApprovalRulesRequest>([](auto& r) { r.set_site("a.example"); }))},
      {"RemoveApprovalRule", kReviewAccess,
       Unary(&Stub::RemoveApprovalRule,
             Make<v1::RemoveApprovalRuleRequest>([](auto& r) { r.set_rule_id(kUnknownUuid); }))},
      {"SetSiteSettings", kAdminAccess,
       Unary(&Stub::SetSiteSettings, Make<v1::SetSiteSettingsRequest>([](auto& r) {
               r.set_domain("a.example");
               r.set_moderation(v1::MODERATION_OFF);
             }))},
      // A hash no mention has: NOT_FOUND after the scope check, nothing fetched.
      {"FetchAvatar", kReadAccess,
       Unary(&Stub::FetchAvatar, Make<v1::FetchAvatarRequest>([](auto& r) {
               r.set_hash(std::string(64, 'a'));
             }))},
  };
}

// A token with every scope but `missing`.
TestToken WithoutScope(auth::Scope missing) {
  std::vector<std::string> names;
  for (auth::Scope scope :
       {auth::Scope::kSubmit, auth::Scope::kRead, auth::Scope::kFetch, auth::Scope::kAdmin}) {
    if (scope != missing) {
      names.emplace_back(auth::ScopeName(scope));
    }
  }
  return test_tokens::MakeTestToken(absl::StrCat("no-", auth::ScopeName(missing)),
                                    absl::StrJoin(names, ","));
}

// Everything written to stderr (the log) while it lives.
class StderrCapture {
 public:
  StderrCapture() : path_(absl::StrCat(::testing::TempDir(), "/stderr-", getpid())) {
    std::fflush(stderr);
    saved_ = dup(2);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
  }
  ~StderrCapture() { Stop(); }
  void Stop() {
    if (saved_ >= 0) {
      std::fflush(stderr);
      dup2(saved_, 2);
      close(saved_);
      saved_ = -1;
    }
  }
  std::string Text() {
    Stop();
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
  int saved_ = -1;
};

class VerifierAuthRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(logging::Init("verifier", "debug").ok());
    PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
    db_ = std::move(db);
    all_ = test_tokens::MakeAllScopesToken("all");
    // Written as an operator might: the verifier binds the site as AddSite stores it.
    bound_a_ = test_tokens::MakeTestToken("bound-a", "admin,fetch,read,submit", {"A.Example"});
    for (auth::Scope scope :
         {auth::Scope::kSubmit, auth::Scope::kRead, auth::Scope::kFetch, auth::Scope::kAdmin}) {
      lacking_.push_back(WithoutScope(scope));
    }
    std::vector<TestToken> file = lacking_;
    file.push_back(all_);
    file.push_back(bound_a_);

    config::Texts flags;
    flags["database_url"] = db_->connection_string();
    flags["grpc_listen"] = "127.0.0.1:0";
    flags["db_pool_size"] = "4";
    flags["health_interval"] = "50ms";
    flags["drain_timeout"] = "5s";
    flags["workers"] = "0";
    // Only the refresh after CreateToken/RevokeToken can make a change visible in these tests.
    flags["token_refresh_interval"] = "1h";
    flags["tokens_file"] = test_tokens::TempTokensFile(file);
    absl::StatusOr<VerifierConfig> config = BuildVerifierConfig(flags, portcullis::config::NoEnvironment);
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<std::unique_ptr<VerifierServer>> server = VerifierServer::Start(*config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = v1::Verifier::NewStub(
        grpc::CreateChannel(server_->address().ToString(), grpc::InsecureChannelCredentials()));
    for (int i = 0; i < 400; ++i) {
      if (Call(all_.token, &Stub::ListSites, v1::ListSitesRequest()).ok()) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Two sites, each with a target, a mention and a block; and one global block.
    for (const char* site : {"a.example", "b.example"}) {
      v1::AddSiteRequest add_site;
      add_site.set_domain(site);
      ASSERT_TRUE(Call(all_.token, &Stub::AddSite, add_site).ok());
      v1::AddTargetRequest add_target;
      add_target.set_url(absl::StrCat("https://", site, "/"));
      add_target.set_kind(v1::TARGET_KIND_PREFIX);
      ASSERT_TRUE(Call(all_.token, &Stub::AddTarget, add_target).ok());
      v1::SubmitMentionRequest submit;
      submit.set_source("https://source.example/a");
      submit.set_target(absl::StrCat("https://", site, "/post"));
      v1::SubmitMentionResponse submitted;
      ASSERT_TRUE(Call(all_.token, &Stub::SubmitMention, submit, &submitted).ok());
      ASSERT_EQ(submitted.decision(), v1::DECISION_ACCEPTED);
      mention_ids_.push_back(submitted.mention_id());
      v1::AddBlockRequest block;
      block.mutable_block()->set_site(site);
      block.mutable_block()->set_kind(v1::BLOCK_KIND_DOMAIN);
      block.mutable_block()->set_value("evil.example");
      ASSERT_TRUE(Call(all_.token, &Stub::AddBlock, block).ok());
    }
    v1::AddBlockRequest global;
    global.mutable_block()->set_kind(v1::BLOCK_KIND_DOMAIN);
    global.mutable_block()->set_value("spam.example");
    ASSERT_TRUE(Call(all_.token, &Stub::AddBlock, global).ok());
  }

  void TearDown() override { server_.reset(); }

  // `authorization` as sent (empty: no metadata).
  grpc::Status CallWith(const RpcCase& rpc, const std::string& authorization) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    if (!authorization.empty()) {
      context.AddMetadata("authorization", authorization);
    }
    return rpc.call(*stub_, context);
  }

  template <typename Request, typename Response>
  grpc::Status Call(const std::string& token,
                    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request, Response* response = nullptr) {
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    test_tokens::AddBearerToken(context, token);
    Response ignored;
    return (stub_.get()->*method)(&context, request, response == nullptr ? &ignored : response);
  }

  // Every row of the site data, so a refused call can be shown to have changed nothing.
  std::string SiteData() {
    pqxx::connection connection(db_->connection_string());
    pqxx::nontransaction tx(connection);
    std::string all;
    for (const char* table : {"sites", "targets", "mentions", "source_blocks"}) {
      const pqxx::row row = tx.exec1(absl::StrCat(
          "SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM ", table, " t"));
      absl::StrAppend(&all, table, ":\n", row[0].as<std::string>(), "\n");
    }
    return all;
  }

  std::unique_ptr<testing::TestDatabase> db_;
  std::unique_ptr<VerifierServer> server_;
  std::unique_ptr<Stub> stub_;
  TestToken all_;
  TestToken bound_a_;
  std::vector<TestToken> lacking_;  // Each without one scope: submit, read, fetch, admin.
  std::vector<std::string> mention_ids_;  // On a.example, then on b.example.
};

bool IsAuthError(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         status.error_code() == grpc::StatusCode::PERMISSION_DENIED;
}

TEST_F(VerifierAuthRpcTest, EveryRpcRefusesCallsWithoutAValidTokenAndNeverEchoesIt) {
  const std::string unknown = auth::GenerateToken();  // Well formed, never issued.
  StderrCapture log;
  for (const RpcCase& rpc : EveryRpc()) {
    for (const std::string& authorization :
         {std::string(), absl::StrCat("Bearer ", unknown), absl::StrCat("Basic ", unknown),
          std::string("Bearer pct_not-a-token"), absl::StrCat("Bearer ", unknown, "0")}) {
      const grpc::Status status = CallWith(rpc, authorization);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << rpc.name << " with '" << authorization << "': " << status.error_message();
      EXPECT_FALSE(absl::StrContains(status.error_message(), unknown)) << rpc.name;
      EXPECT_FALSE(absl::StrContains(status.error_message(), "pct_")) << rpc.name;
    }
  }
  // And with a valid token: the token is not in any log line either.
  for (const RpcCase& rpc : EveryRpc()) {
    EXPECT_FALSE(IsAuthError(CallWith(rpc, absl::StrCat("Bearer ", all_.token)))) << rpc.name;
  }
  const std::string text = log.Text();
  EXPECT_TRUE(absl::StrContains(text, "api token created")) << "the log was not captured";
  EXPECT_FALSE(absl::StrContains(text, unknown));
  EXPECT_FALSE(absl::StrContains(text, all_.token));
  EXPECT_FALSE(absl::StrContains(text, "pct_"));
}

TEST_F(VerifierAuthRpcTest, EveryRpcNeedsItsScopeAndUnboundOnlyRpcsRefuseABoundToken) {
  for (const RpcCase& rpc : EveryRpc()) {
    for (const TestToken& token : lacking_) {
      const grpc::Status status = CallWith(rpc, absl::StrCat("Bearer ", token.token));
      if (token.active.caller.Require(rpc.access.scope).ok()) {  // admin includes review
        EXPECT_FALSE(IsAuthError(status))
            << rpc.name << " with " << token.active.caller.name << ": " << status.error_message();
      } else {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
            << rpc.name << " with " << token.active.caller.name;
        EXPECT_TRUE(absl::StrContains(status.error_message(), auth::ScopeName(rpc.access.scope)))
            << rpc.name << ": " << status.error_message();
      }
    }
    const grpc::Status bound = CallWith(rpc, absl::StrCat("Bearer ", bound_a_.token));
    if (rpc.access.unbound_only) {
      EXPECT_EQ(bound.error_code(), grpc::StatusCode::PERMISSION_DENIED) << rpc.name;
    } else {
      // Every bound-capable row names a.example (or no site): the binding lets it through.
      EXPECT_FALSE(IsAuthError(bound)) << rpc.name << ": " << bound.error_message();
    }
  }
}

TEST_F(VerifierAuthRpcTest, CreatedTokensWorkAtOnceAndRevokedOnesStopAtOnce) {
  v1::CreateTokenRequest create;
  create.set_name("ci reader");
  create.add_scopes("read");
  create.add_scopes("admin");
  create.add_sites("A.Example");
  v1::CreateTokenResponse created;
  ASSERT_TRUE(Call(all_.token, &Stub::CreateToken, create, &created).ok());
  const std::string token = created.token();
  EXPECT_TRUE(absl::StartsWith(token, "pct_")) << token;
  EXPECT_EQ(created.api_token().name(), "ci reader");
  EXPECT_EQ(std::vector<std::string>(created.api_token().scopes().begin(),
                                     created.api_token().scopes().end()),
            (std::vector<std::string>{"admin", "read"}));
  ASSERT_EQ(created.api_token().sites_size(), 1);
  EXPECT_EQ(created.api_token().sites(0), "a.example");
  EXPECT_FALSE(created.api_token().has_revoked_at());

  // At once on this verifier (the refresh interval is an hour), bound to a.example.
  v1::ListSitesResponse sites;
  ASSERT_TRUE(Call(token, &Stub::ListSites, v1::ListSitesRequest(), &sites).ok());
  ASSERT_EQ(sites.sites_size(), 1);
  EXPECT_EQ(sites.sites(0).domain(), "a.example");

  // Listed without the token or its hash; the database holds only the hash.
  v1::ListTokensResponse listed;
  ASSERT_TRUE(Call(all_.token, &Stub::ListTokens, v1::ListTokensRequest(), &listed).ok());
  ASSERT_EQ(listed.tokens_size(), 1);
  EXPECT_EQ(listed.tokens(0).id(), created.api_token().id());
  EXPECT_FALSE(absl::StrContains(listed.DebugString(), token));
  EXPECT_FALSE(absl::StrContains(listed.DebugString(), auth::HashToken(token)));
  {
    pqxx::connection connection(db_->connection_string());
    pqxx::nontransaction tx(connection);
    const pqxx::row row = tx.exec1("SELECT count(*) FROM api_tokens t WHERE t::text LIKE '%" +
                                   token.substr(4) + "%'");
    EXPECT_EQ(row[0].as<int>(), 0);
  }

  v1::RevokeTokenRequest revoke;
  revoke.set_id(created.api_token().id());
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(Call(all_.token, &Stub::RevokeToken, revoke, &revoked).ok());
  EXPECT_TRUE(revoked.api_token().has_revoked_at());
  for (const RpcCase& rpc : EveryRpc()) {
    const grpc::Status status = CallWith(rpc, absl::StrCat("Bearer ", token));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << rpc.name;
    EXPECT_FALSE(absl::StrContains(status.error_message(), token)) << rpc.name;
  }
  // Revoking again is idempotent; an unknown id is NOT_FOUND; a static token is not revocable.
  EXPECT_TRUE(Call(all_.token, &Stub::RevokeToken, revoke).ok());
  revoke.set_id(kUnknownUuid);
  EXPECT_EQ(Call(all_.token, &Stub::RevokeToken, revoke).error_code(),
            grpc::StatusCode::NOT_FOUND);
  revoke.set_id("static:all");
  EXPECT_EQ(Call(all_.token, &Stub::RevokeToken, revoke).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(VerifierAuthRpcTest, CreateTokenRefusesMalformedRequests) {
  const auto request = [](const std::string& name, std::vector<std::string> scopes,
                          std::vector<std::string> sites) {
    v1::CreateTokenRequest r;
    r.set_name(name);
    for (const std::string& scope : scopes) r.add_scopes(scope);
    for (const std::string& site : sites) r.add_sites(site);
    return r;
  };
  const v1::CreateTokenRequest bad[] = {
      request("", {"read"}, {}),
      request(std::string(129, 'n'), {"read"}, {}),
      request("line\nbreak", {"read"}, {}),
      request("n", {}, {}),
      request("n", {"root"}, {}),
      request("n", {"read,admin"}, {}),
      request("n", {"read"}, {"https://a.example/"}),
      request("n", {"read"}, {"a b.example"}),
  };
  for (const v1::CreateTokenRequest& r : bad) {
    EXPECT_EQ(Call(all_.token, &Stub::CreateToken, r).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << r.ShortDebugString();
  }
  v1::ListTokensResponse listed;
  ASSERT_TRUE(Call(all_.token, &Stub::ListTokens, v1::ListTokensRequest(), &listed).ok());
  EXPECT_EQ(listed.tokens_size(), 0);
}

// A token bound to a.example, with every scope, against b.example's data: every site-data RPC is
// PERMISSION_DENIED and the database is unchanged; its own site works.
TEST_F(VerifierAuthRpcTest, SiteBoundTokenCannotReachAnotherSite) {
  const std::string& token = bound_a_.token;
  const std::string before = SiteData();
  std::vector<std::pair<const char*, grpc::Status>> refused;
  {
    v1::SubmitMentionRequest r;
    r.set_source("https://source.example/new");
    r.set_target("https://b.example/other");
    refused.emplace_back("SubmitMention", Call(token, &Stub::SubmitMention, r));
  }
  {
    v1::VerifyNowRequest r;
    r.set_source("https://source.example/new");
    r.set_target("https://b.example/other");
    refused.emplace_back("VerifyNow", Call(token, &Stub::VerifyNow, r));
  }
  {
    v1::GetMentionRequest r;
    r.set_mention_id(mention_ids_[1]);
    refused.emplace_back("GetMention", Call(token, &Stub::GetMention, r));
  }
  {
    v1::ListMentionsRequest r;
    r.set_domain("b.example");
    refused.emplace_back("ListMentions domain", Call(token, &Stub::ListMentions, r));
    r.set_domain("");
    r.set_target("https://b.example/post");
    refused.emplace_back("ListMentions target", Call(token, &Stub::ListMentions, r));
  }
  {
    v1::AddSiteRequest r;
    r.set_domain("c.example");
    refused.emplace_back("AddSite", Call(token, &Stub::AddSite, r));
    v1::RemoveSiteRequest remove;
    remove.set_domain("b.example");
    refused.emplace_back("RemoveSite", Call(token, &Stub::RemoveSite, remove));
  }
  {
    v1::AddTargetRequest r;
    r.set_url("https://b.example/new/");
    r.set_kind(v1::TARGET_KIND_PREFIX);
    refused.emplace_back("AddTarget", Call(token, &Stub::AddTarget, r));
    v1::ImportTargetsRequest import;
    v1::AddTargetRequest* own = import.add_targets();
    own->set_url("https://a.example/new/");
    own->set_kind(v1::TARGET_KIND_PREFIX);
    *import.add_targets() = r;
    refused.emplace_back("ImportTargets", Call(token, &Stub::ImportTargets, import));
    v1::RemoveTargetRequest remove;
    remove.set_url("https://b.example/");
    remove.set_kind(v1::TARGET_KIND_PREFIX);
    refused.emplace_back("RemoveTarget", Call(token, &Stub::RemoveTarget, remove));
    v1::ListTargetsRequest list;
    list.set_domain("b.example");
    refused.emplace_back("ListTargets", Call(token, &Stub::ListTargets, list));
  }
  {
    v1::AddBlockRequest r;
    r.mutable_block()->set_site("b.example");
    r.mutable_block()->set_kind(v1::BLOCK_KIND_DOMAIN);
    r.mutable_block()->set_value("other.example");
    refused.emplace_back("AddBlock site", Call(token, &Stub::AddBlock, r));
    r.mutable_block()->set_site("");
    refused.emplace_back("AddBlock global", Call(token, &Stub::AddBlock, r));
    v1::RemoveBlockRequest remove;
    remove.mutable_block()->set_site("b.example");
    remove.mutable_block()->set_kind(v1::BLOCK_KIND_DOMAIN);
    remove.mutable_block()->set_value("evil.example");
    refused.emplace_back("RemoveBlock site", Call(token, &Stub::RemoveBlock, remove));
    remove.mutable_block()->set_site("");
    remove.mutable_block()->set_value("spam.example");
    refused.emplace_back("RemoveBlock global", Call(token, &Stub::RemoveBlock, remove));
    v1::ListBlocksRequest list;
    list.set_site("b.example");
    refused.emplace_back("ListBlocks site", Call(token, &Stub::ListBlocks, list));
    list.set_site("");
    refused.emplace_back("ListBlocks global", Call(token, &Stub::ListBlocks, list));
  }
  for (const auto& [what, status] : refused) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << what << ": " << status.error_message();
    EXPECT_FALSE(absl::StrContains(status.error_message(), token)) << what;
  }
  EXPECT_EQ(SiteData(), before);
  {
    // In a batch, the item on another site is refused, and only that item.
    v1::SubmitMentionsRequest r;
    v1::SubmitMentionRequest* other = r.add_items()->mutable_mention();
    other->set_source("https://source.example/new");
    other->set_target("https://b.example/other");
    v1::SubmitMentionRequest* own = r.add_items()->mutable_mention();
    own->set_source("https://source.example/a");
    own->set_target("https://a.example/post");
    v1::SubmitMentionsResponse answered;
    ASSERT_TRUE(Call(token, &Stub::SubmitMentions, r, &answered).ok());
    ASSERT_EQ(answered.results_size(), 2);
    EXPECT_EQ(answered.results(0).status().code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(answered.results(1).status().code(), grpc::StatusCode::OK)
        << answered.results(1).status().message();
  }

  // Its own site: the reads see a.example only, filtered in the database.
  v1::GetMentionRequest get;
  get.set_mention_id(mention_ids_[0]);
  EXPECT_TRUE(Call(token, &Stub::GetMention, get).ok());
  get.set_mention_id(kUnknownUuid);
  EXPECT_EQ(Call(token, &Stub::GetMention, get).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::ListSitesResponse sites;
  ASSERT_TRUE(Call(token, &Stub::ListSites, v1::ListSitesRequest(), &sites).ok());
  ASSERT_EQ(sites.sites_size(), 1);
  EXPECT_EQ(sites.sites(0).domain(), "a.example");
  v1::ListTargetsResponse targets;
  ASSERT_TRUE(Call(token, &Stub::ListTargets, v1::ListTargetsRequest(), &targets).ok());
  ASSERT_EQ(targets.targets_size(), 1);
  EXPECT_EQ(targets.targets(0).domain(), "a.example");
  v1::ListMentionsRequest list;
  list.set_domain("a.example");
  v1::ListMentionsResponse mentions;
  ASSERT_TRUE(Call(token, &Stub::ListMentions, list, &mentions).ok());
  ASSERT_EQ(mentions.mentions_size(), 1);
  EXPECT_EQ(mentions.mentions(0).mention_id(), mention_ids_[0]);
  v1::ListBlocksRequest blocks;
  blocks.set_site("a.example");
  v1::ListBlocksResponse listed_blocks;
  ASSERT_TRUE(Call(token, &Stub::ListBlocks, blocks, &listed_blocks).ok());
  EXPECT_EQ(listed_blocks.blocks_size(), 1);

  // The unbound token still sees both.
  ASSERT_TRUE(Call(all_.token, &Stub::ListSites, v1::ListSitesRequest(), &sites).ok());
  EXPECT_EQ(sites.sites_size(), 2);
}

}  // namespace
}  // namespace portcullis::verifier::server
