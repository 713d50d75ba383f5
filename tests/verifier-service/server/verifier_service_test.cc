#include "verifier-service/src/server/verifier_service.h"

#include <memory>

#include "absl/synchronization/notification.h"
#include "common/crypto/sha256.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verifier-service/server/loopback_service.h"
#include "tests/verifier-service/server/service_deps.h"
#include "tests/verifier-service/server/test_tokens.h"
#include "verifier-service/src/intake/target_rules.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

using ::testing::_;
using ::testing::Field;
using ::testing::Return;

class MockMentionStore : public store::MentionStore {
 public:
  MOCK_METHOD(absl::StatusOr<store::SubmitResult>, Submit, (const store::NewMention&), (override));
  MOCK_METHOD(absl::StatusOr<store::StoredMention>, Get,
              (absl::string_view, const auth::SiteBinding&), (override));
  MOCK_METHOD(absl::StatusOr<store::MentionPage>, List,
              (const store::MentionQuery&, const auth::SiteBinding&), (override));
  MOCK_METHOD(absl::Status, Ping, (), (override));
};

class MockSiteStore : public store::SiteStore {
 public:
  MOCK_METHOD(absl::StatusOr<store::AddSiteResult>, AddSite,
              (const std::string&, const auth::SiteBinding&), (override));
  MOCK_METHOD(absl::StatusOr<std::vector<store::SiteRecord>>, ListSites,
              (const std::string&, int, const auth::SiteBinding&), (override));
  MOCK_METHOD(absl::StatusOr<int64_t>, RemoveSite, (const std::string&, const auth::SiteBinding&),
              (override));
  MOCK_METHOD(absl::StatusOr<store::AddTargetsResult>, AddTargets,
              (absl::Span<const intake::TargetRule>, const auth::SiteBinding&), (override));
  MOCK_METHOD(absl::StatusOr<std::vector<store::TargetRecord>>, ListTargets,
              (const std::string&, const std::optional<intake::TargetRule>&, int,
               const auth::SiteBinding&),
              (override));
  MOCK_METHOD(absl::StatusOr<store::TargetRecord>, RemoveTarget,
              (const std::string&, intake::TargetKind, const auth::SiteBinding&), (override));
};

store::SubmitResult Accepted(const std::string& id, store::MentionState state, bool created) {
  store::SubmitResult result;
  result.mention_id = id;
  result.state = state;
  result.created = created;
  return result;
}

store::SubmitResult TargetRejected(store::TargetMatch match) {
  store::SubmitResult result;
  result.target = match;
  return result;
}

constexpr char kId[] = "0b6a4a8e-3f0e-4c1a-9a57-2f1d2c3b4a5e";

// The service on 127.0.0.1:0 over a mock store, and a client.
class VerifierServiceTest : public ::testing::Test {
 protected:
  void StartServer(int threads = 2, size_t max_queued = 16) {
    pool_ = std::make_unique<BlockingPool>(threads, max_queued);
    parts_.deps.pool = pool_.get();
    parts_.deps.mentions = &store_;
    parts_.deps.sites = &sites_;
    server_.Start(parts_);
  }

  void TearDown() override {
    server_.Shutdown();
    if (pool_ != nullptr) {
      pool_->Stop();
    }
  }

  grpc::Status Submit(const std::string& source, const std::string& target,
                      v1::SubmitMentionResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SubmitMentionRequest request;
    request.set_source(source);
    request.set_target(target);
    return server_.stub().SubmitMention(&context, request, response);
  }

  grpc::Status GetMention(const std::string& id, v1::GetMentionResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetMentionRequest request;
    request.set_mention_id(id);
    return server_.stub().GetMention(&context, request, response);
  }

  MockMentionStore store_;
  MockSiteStore sites_;
  std::unique_ptr<BlockingPool> pool_;
  test_service::ServiceParts parts_;
  test_service::LoopbackService server_;
};

TEST_F(VerifierServiceTest, AcceptsAndStoresNormalizedHashes) {
  StartServer();
  EXPECT_CALL(
      store_,
      Submit(
          AllOf(Field(&store::NewMention::source, "HTTPS://Source.example:443/a#x"),
                Field(&store::NewMention::target, "https://target.example/b"),
                Field(&store::NewMention::source_hash, crypto::Sha256("https://source.example/a")),
                Field(&store::NewMention::target_hash, crypto::Sha256("https://target.example/b")),
                Field(&store::NewMention::target_domain, "target.example"),
                Field(&store::NewMention::normalized_target, "https://target.example/b"))))
      .WillOnce(Return(Accepted(kId, store::MentionState::kPending, true)));
  v1::SubmitMentionResponse response;
  const grpc::Status status =
      Submit("HTTPS://Source.example:443/a#x", "https://target.example/b", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.decision(), v1::DECISION_ACCEPTED);
  EXPECT_EQ(response.mention_id(), kId);
  EXPECT_EQ(response.state(), v1::MENTION_STATE_PENDING);
  EXPECT_TRUE(response.created());
  EXPECT_EQ(response.reason(), "");
}

TEST_F(VerifierServiceTest, RejectionIsAnAnswerNotAnErrorAndSkipsTheStore) {
  StartServer();
  EXPECT_CALL(store_, Submit(_)).Times(0);
  v1::SubmitMentionResponse response;
  const grpc::Status status = Submit("ftp://a.example/", "https://b.example/", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.decision(), v1::DECISION_REJECTED);
  EXPECT_EQ(response.reason(), "unsupported_scheme");
  EXPECT_FALSE(response.reason_description().empty());
  EXPECT_EQ(response.mention_id(), "");
  EXPECT_EQ(response.state(), v1::MENTION_STATE_UNSPECIFIED);
}

TEST_F(VerifierServiceTest, StoreUnavailableIsUnavailable) {
  StartServer();
  EXPECT_CALL(store_, Submit(_)).WillOnce(Return(absl::UnavailableError("database unavailable")));
  v1::SubmitMentionResponse response;
  const grpc::Status status = Submit("https://a.example/", "https://b.example/", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(VerifierServiceTest, AFullPoolIsUnavailableAtOnceButSubmissionsGoOn) {
  StartServer(/*threads=*/1, /*max_queued=*/1);
  absl::Notification started;
  absl::Notification release;
  ASSERT_TRUE(pool_->TrySubmit([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();
  ASSERT_TRUE(pool_->TrySubmit([] {}));  // The queue is now full.
  EXPECT_CALL(store_, Get(_, _)).Times(0);
  // Submissions do not wait for this pool: they go to the batch writer (its own bounded queue:
  // VerifierMentionWriterTest.AFullQueueIsRefusedAtOnce).
  store::SubmitResult stored;
  stored.mention_id = kId;
  EXPECT_CALL(store_, Submit(_)).WillOnce(Return(stored));
  v1::SubmitMentionResponse submit_response;
  EXPECT_TRUE(Submit("https://a.example/", "https://b.example/", &submit_response).ok());
  v1::GetMentionResponse get_response;
  EXPECT_EQ(GetMention(kId, &get_response).error_code(), grpc::StatusCode::UNAVAILABLE);
  release.Notify();
  pool_->Stop();  // Joins the thread still inside `release` before the notifications go away.
}

TEST_F(VerifierServiceTest, SubmitMentionsAnswersEachItemAsSubmitMentionWouldAnswerIt) {
  StartServer();
  EXPECT_CALL(store_, Submit(Field(&store::NewMention::source, "https://a.example/new")))
      .WillOnce(Return(Accepted(kId, store::MentionState::kPending, true)));
  EXPECT_CALL(store_, Submit(Field(&store::NewMention::source, "https://a.example/down")))
      .WillOnce(Return(absl::UnavailableError("database unavailable")));
  EXPECT_CALL(store_, Submit(Field(&store::NewMention::source, "https://a.example/unserved")))
      .WillOnce(Return(TargetRejected(store::TargetMatch::kUnknownSite)));
  EXPECT_CALL(store_, Submit(Field(&store::NewMention::source, "https://a.example/broken")))
      .WillOnce(Return(absl::InternalError("SQL state XX000 at relation mentions")));
  v1::SubmitMentionsRequest request;
  for (const char* source : {"https://a.example/new", "ftp://a.example/", "https://a.example/down",
                             "https://a.example/unserved", "https://a.example/broken"}) {
    v1::SubmitMentionsItem* item = request.add_items();
    item->set_request_id("item-1");
    item->mutable_mention()->set_source(source);
    item->mutable_mention()->set_target("https://b.example/post");
  }
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::SubmitMentionsResponse response;
  const grpc::Status status = server_.stub().SubmitMentions(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.results_size(), 5);

  EXPECT_EQ(response.results(0).status().code(), 0);
  EXPECT_EQ(response.results(0).mention().decision(), v1::DECISION_ACCEPTED);
  EXPECT_EQ(response.results(0).mention().mention_id(), kId);
  EXPECT_TRUE(response.results(0).mention().created());

  EXPECT_EQ(response.results(1).status().code(), 0) << "a rejection is an answer, not an error";
  EXPECT_EQ(response.results(1).mention().decision(), v1::DECISION_REJECTED);
  EXPECT_EQ(response.results(1).mention().reason(), "unsupported_scheme");

  EXPECT_EQ(response.results(2).status().code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(response.results(2).has_mention());

  EXPECT_EQ(response.results(3).mention().decision(), v1::DECISION_REJECTED);
  EXPECT_EQ(response.results(3).mention().reason(), "target_not_supported");

  EXPECT_EQ(response.results(4).status().code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(response.results(4).status().message(), "database unavailable, retry later")
      << "nothing from inside (SQL) leaks into an item's answer";
}

TEST_F(VerifierServiceTest, SubmitMentionsRefusesAnEmptyOrOversizedCallWhole) {
  StartServer();
  EXPECT_CALL(store_, Submit(_)).Times(0);
  const auto call = [&](int items) {
    v1::SubmitMentionsRequest request;
    for (int i = 0; i < items; ++i) {
      v1::SubmitMentionsItem* item = request.add_items();
      item->mutable_mention()->set_source("https://a.example/" + std::to_string(i));
      item->mutable_mention()->set_target("https://b.example/post");
    }
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SubmitMentionsResponse response;
    return server_.stub().SubmitMentions(&context, request, &response).error_code();
  };
  EXPECT_EQ(call(0), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(call(kMaxBatchItems + 1), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(VerifierServiceTest, NotReadyIsUnavailable) {
  StartServer();
  server_.service().SetReady(false);
  EXPECT_CALL(store_, Submit(_)).Times(0);
  v1::SubmitMentionResponse response;
  EXPECT_EQ(Submit("https://a.example/", "https://b.example/", &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(VerifierServiceTest, GetMentionReturnsTheMention) {
  StartServer();
  store::StoredMention stored;
  stored.mention_id = kId;
  stored.source = "https://a.example/";
  stored.target = "https://b.example/";
  stored.state = store::MentionState::kFailed;
  stored.reason = "no_link";
  stored.created_at = absl::FromUnixSeconds(1700000000);
  stored.updated_at = absl::FromUnixSeconds(1700000060);
  EXPECT_CALL(store_, Get(absl::string_view(kId), _)).WillOnce(Return(stored));
  v1::GetMentionResponse response;
  const grpc::Status status = GetMention(kId, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.mention().mention_id(), kId);
  EXPECT_EQ(response.mention().source(), "https://a.example/");
  EXPECT_EQ(response.mention().state(), v1::MENTION_STATE_FAILED);
  EXPECT_EQ(response.mention().reason(), "no_link");
  EXPECT_EQ(response.mention().created_at().seconds(), 1700000000);
  EXPECT_EQ(response.mention().updated_at().seconds(), 1700000060);
}

TEST_F(VerifierServiceTest, GetMentionErrors) {
  StartServer();
  EXPECT_CALL(store_, Get(_, _)).WillOnce(Return(absl::NotFoundError("no mention has this id")));
  v1::GetMentionResponse response;
  EXPECT_EQ(GetMention(kId, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GetMention("not-a-uuid", &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(GetMention("", &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(VerifierServiceTest, TargetNotServedIsARejectionWithItsOwnCode) {
  StartServer();
  EXPECT_CALL(store_,
              Submit(Field(&store::NewMention::normalized_target, "https://elsewhere.example/x")))
      .WillOnce(Return(TargetRejected(store::TargetMatch::kUnknownSite)));
  EXPECT_CALL(store_, Submit(Field(&store::NewMention::normalized_target,
                                   "https://target.example/unknown")))
      .WillOnce(Return(TargetRejected(store::TargetMatch::kUnknownResource)));
  v1::SubmitMentionResponse response;
  ASSERT_TRUE(Submit("https://a.example/", "https://elsewhere.example/x", &response).ok());
  EXPECT_EQ(response.decision(), v1::DECISION_REJECTED);
  EXPECT_EQ(response.reason(), "target_not_supported");
  EXPECT_FALSE(response.reason_description().empty());
  EXPECT_EQ(response.mention_id(), "");

  // The fragment is not part of what target rules match.
  v1::SubmitMentionResponse not_found;
  ASSERT_TRUE(
      Submit("https://a.example/", "https://target.example/unknown#reply-3", &not_found).ok());
  EXPECT_EQ(not_found.decision(), v1::DECISION_REJECTED);
  EXPECT_EQ(not_found.reason(), "target_not_found");
}

TEST_F(VerifierServiceTest, AddSiteNormalizesTheDomainAndRejectsNonHosts) {
  StartServer();
  store::AddSiteResult added;
  added.site.domain = "xn--bcher-kva.example";
  added.site.created_at = absl::FromUnixSeconds(1700000000);
  added.created = true;
  EXPECT_CALL(sites_, AddSite("xn--bcher-kva.example", _)).WillOnce(Return(added));
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  v1::AddSiteRequest request;
  request.set_domain("Bücher.Example");
  v1::AddSiteResponse response;
  ASSERT_TRUE(server_.stub().AddSite(&context, request, &response).ok());
  EXPECT_EQ(response.site().domain(), "xn--bcher-kva.example");
  EXPECT_TRUE(response.created());

  for (const char* bad : {"", "https://blog.example", "blog.example:8080", "blog.example/x",
                          "a b.example", "user@blog.example"}) {
    grpc::ClientContext bad_context;
    test_tokens::AddBearerToken(bad_context, test_tokens::ProcessToken().token);
    request.set_domain(bad);
    EXPECT_EQ(server_.stub().AddSite(&bad_context, request, &response).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << bad;
  }
}

TEST_F(VerifierServiceTest, AddTargetStoresTheNormalizedRule) {
  StartServer();
  const intake::TargetRule expected{"https://blog.example/post?id=1", intake::TargetKind::kExact,
                                    "blog.example"};
  EXPECT_CALL(sites_, AddTargets(::testing::ElementsAre(expected), _))
      .WillOnce([](absl::Span<const intake::TargetRule> rules, const auth::SiteBinding&) {
        store::AddTargetsResult result;
        result.targets.push_back({rules[0], absl::FromUnixSeconds(1700000000)});
        result.added = 1;
        return result;
      });
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  v1::AddTargetRequest request;
  request.set_url("HTTPS://Blog.Example:443/post?id=1&utm_source=x#top");
  request.set_kind(v1::TARGET_KIND_EXACT);
  v1::AddTargetResponse response;
  const grpc::Status status = server_.stub().AddTarget(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.target().url(), "https://blog.example/post?id=1");
  EXPECT_EQ(response.target().domain(), "blog.example");
  EXPECT_EQ(response.target().kind(), v1::TARGET_KIND_EXACT);
  EXPECT_TRUE(response.created());
}

TEST_F(VerifierServiceTest, AddTargetUnknownSiteIsFailedPrecondition) {
  StartServer();
  EXPECT_CALL(sites_, AddTargets(_, _))
      .WillOnce(Return(absl::FailedPreconditionError("site is not served")));
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  v1::AddTargetRequest request;
  request.set_url("https://blog.example/posts/");
  request.set_kind(v1::TARGET_KIND_PREFIX);
  v1::AddTargetResponse response;
  EXPECT_EQ(server_.stub().AddTarget(&context, request, &response).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(VerifierServiceTest, ListSitesPagesWithAToken) {
  StartServer();
  EXPECT_CALL(sites_, ListSites("", 3, _))
      .WillOnce(Return(std::vector<store::SiteRecord>{{"a.example", absl::FromUnixSeconds(1), 2},
                                                      {"b.example", absl::FromUnixSeconds(2), 0},
                                                      {"c.example", absl::FromUnixSeconds(3), 1}}));
  EXPECT_CALL(sites_, ListSites("b.example", 3, _))
      .WillOnce(Return(std::vector<store::SiteRecord>{{"c.example", absl::FromUnixSeconds(3), 1}}));
  v1::ListSitesRequest request;
  request.set_page_size(2);
  v1::ListSitesResponse first;
  {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    ASSERT_TRUE(server_.stub().ListSites(&context, request, &first).ok());
  }
  ASSERT_EQ(first.sites_size(), 2);
  EXPECT_EQ(first.sites(0).domain(), "a.example");
  EXPECT_EQ(first.sites(0).target_count(), 2);
  ASSERT_FALSE(first.next_page_token().empty());
  request.set_page_token(first.next_page_token());
  v1::ListSitesResponse second;
  {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    ASSERT_TRUE(server_.stub().ListSites(&context, request, &second).ok());
  }
  ASSERT_EQ(second.sites_size(), 1);
  EXPECT_EQ(second.sites(0).domain(), "c.example");
  EXPECT_TRUE(second.next_page_token().empty());

  request.set_page_token("not a token");
  grpc::ClientContext context;
  test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
  EXPECT_EQ(server_.stub().ListSites(&context, request, &second).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(VerifierServiceCreateTest, EveryDependencyIsRequiredAndTheMissingOneIsNamed) {
  test_tokens::NoDatabaseTokens no_database;
  std::unique_ptr<auth::TokenRegistry> tokens = test_tokens::StaticRegistry(no_database, {});
  test_service::ServiceParts parts;
  ASSERT_NE(parts.Build(*tokens), nullptr);
  VerifierServiceDeps without_blocks = parts.deps;
  without_blocks.blocks = nullptr;
  absl::StatusOr<std::unique_ptr<VerifierService>> service = VerifierService::Create(without_blocks);
  EXPECT_EQ(service.status(), absl::InvalidArgumentError("verifier service: no blocks"));
  VerifierServiceDeps without_verify_now = parts.deps;
  without_verify_now.verify_now.pool = nullptr;
  service = VerifierService::Create(without_verify_now);
  EXPECT_EQ(service.status(), absl::InvalidArgumentError("verifier service: no verify_now.pool"));
}

}  // namespace
}  // namespace portcullis::verifier::server
