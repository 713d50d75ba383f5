// unary_rpc: the request id a call is known by, the one mapping of store errors, the paging trick,
// and — through a real in-process gRPC server over the whole service — the request id on every
// answer and on every log line of the call.

#include "verifier-service/src/server/unary_rpc.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/grpc/request_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ringbuffer_sink.h"
#include "spdlog/spdlog.h"
#include "tests/verifier-service/server/loopback_service.h"
#include "tests/verifier-service/server/service_deps.h"
#include "tests/verifier-service/server/test_tokens.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

TEST(VerifierUnaryRpcTest, RequestIdsAreAcceptedOnlyWhenSafeToLog) {
  EXPECT_EQ(AcceptRequestId("gw-0123.abc_DEF:9"), "gw-0123.abc_DEF:9");
  EXPECT_EQ(AcceptRequestId(std::string(128, 'a')), std::string(128, 'a'));
  EXPECT_EQ(AcceptRequestId(std::string(129, 'a')), std::nullopt);
  EXPECT_EQ(AcceptRequestId(""), std::nullopt);
  EXPECT_EQ(AcceptRequestId("a b"), std::nullopt);
  EXPECT_EQ(AcceptRequestId("a\nrequest_id=forged"), std::nullopt);
  EXPECT_EQ(AcceptRequestId("caf\xc3\xa9"), std::nullopt);
  EXPECT_EQ(AcceptRequestId("a/b"), std::nullopt);
  const std::string made_up = MakeRequestId();
  EXPECT_THAT(made_up, MatchesRegex("[0-9a-f]{16}"));
  EXPECT_EQ(AcceptRequestId(made_up), made_up);
  EXPECT_NE(MakeRequestId(), made_up);
}

TEST(VerifierUnaryRpcTest, StoreErrorsMapOneWayForEveryRpc) {
  const RpcCall call(nullptr, nullptr, "map-test");
  for (const absl::Status& deliberate :
       {absl::NotFoundError("no such site"), absl::InvalidArgumentError("bad token"),
        absl::PermissionDeniedError("not your site"),
        absl::ResourceExhaustedError("too many pending mentions from this source"),
        absl::FailedPreconditionError("site a.example is not served; add the site first"),
        absl::UnavailableError("verification queue full, retry later"),
        absl::DeadlineExceededError("statement timeout")}) {
    EXPECT_EQ(StoreStatus(deliberate, call), deliberate);
  }
  EXPECT_TRUE(StoreStatus(absl::OkStatus(), call).ok());
  for (const absl::Status& database :
       {absl::InternalError("database error"),
        absl::InternalError("mention has unknown state 'SELECT 1'"),
        absl::UnknownError("pq: relation \"mentions\" does not exist"),
        absl::AbortedError("serialization failure"), absl::DataLossError("x"),
        absl::UnauthenticatedError("password authentication failed")}) {
    const absl::Status mapped = StoreStatus(database, call);
    EXPECT_EQ(mapped, absl::UnavailableError("database unavailable, retry later")) << database;
  }
}

TEST(VerifierUnaryRpcTest, ListPageAsksForOneMoreRowAndTrimsIt) {
  std::vector<int> limits;
  const auto read = [&](int limit) -> absl::StatusOr<std::vector<int>> {
    limits.push_back(limit);
    std::vector<int> rows;
    for (int i = 0; i < std::min(limit, 5); ++i) {
      rows.push_back(i);
    }
    return rows;
  };
  const auto token_of = [](int last) { return absl::StrCat("after:", last); };
  std::vector<int> added;
  const auto add = [&](int row) { added.push_back(row); };
  std::string token;
  ASSERT_TRUE(ListPage(3, read, token_of, add, &token).ok());
  EXPECT_EQ(added, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(token, "after:2");
  token.clear();
  added.clear();
  ASSERT_TRUE(ListPage(5, read, token_of, add, &token).ok());
  EXPECT_EQ(added.size(), 5u);
  EXPECT_EQ(token, "") << "no more rows: no next page";
  EXPECT_EQ(limits, (std::vector<int>{4, 6}));
  added.clear();
  EXPECT_EQ(ListPage(
                3, [](int) -> absl::StatusOr<std::vector<int>> { return absl::UnavailableError("down"); },
                token_of, add, &token),
            absl::UnavailableError("down"));
  EXPECT_TRUE(added.empty());
}

// The whole service (null stores: a database call answers INTERNAL "unused") on 127.0.0.1:0,
// with the process's log lines kept in memory.
class VerifierRequestIdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
    server_.Start(parts_);
  }

  void TearDown() override {
    server_.Shutdown();
    spdlog::set_default_logger(previous_);
  }

  // AddSite of `domain`, with `request_id` in the metadata unless empty; the trailer's id.
  grpc::Status AddSite(const std::string& domain, const std::string& request_id,
                       std::string* trailer) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    if (!request_id.empty()) {
      context.AddMetadata(grpc_metadata::kRequestIdMetadata, request_id);
    }
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::AddSiteRequest request;
    request.set_domain(domain);
    v1::AddSiteResponse response;
    const grpc::Status status = server_.stub().AddSite(&context, request, &response);
    const auto& trailing = context.GetServerTrailingMetadata();
    const auto found = trailing.find(grpc_metadata::kRequestIdMetadata);
    *trailer = found == trailing.end() ? "" : std::string(found->second.data(), found->second.size());
    return status;
  }

  std::vector<std::string> LogLines() { return sink_->last_formatted(); }

  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
  test_service::ServiceParts parts_;
  test_service::LoopbackService server_;
};

TEST_F(VerifierRequestIdTest, AFailedValidationCarriesTheCallersRequestId) {
  std::string trailer;
  const grpc::Status status = AddSite("not a host", "gw-7f3a", &trailer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(trailer, "gw-7f3a");
  EXPECT_THAT(status.error_message(), Not(HasSubstr("gw-7f3a"))) << "never in the public message";
}

TEST_F(VerifierRequestIdTest, WithoutOneOrWithAnUnsafeOneTheVerifierMakesOneUp) {
  std::string trailer;
  EXPECT_EQ(AddSite("not a host", "", &trailer).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(trailer, MatchesRegex("[0-9a-f]{16}"));
  const std::string unsafe = "x request_id=forged";
  EXPECT_EQ(AddSite("not a host", unsafe, &trailer).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(trailer, MatchesRegex("[0-9a-f]{16}"));
  // A refused token answers with an id too.
  grpc::ClientContext context;
  context.AddMetadata(grpc_metadata::kRequestIdMetadata, "gw-unauth");
  v1::AddSiteResponse response;
  EXPECT_EQ(server_.stub().AddSite(&context, v1::AddSiteRequest(), &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  const auto& trailing = context.GetServerTrailingMetadata();
  ASSERT_EQ(trailing.count(grpc_metadata::kRequestIdMetadata), 1u);
  EXPECT_EQ(trailing.find(grpc_metadata::kRequestIdMetadata)->second, "gw-unauth");
}

TEST_F(VerifierRequestIdTest, ADatabaseErrorIsUnavailableWithoutDetailAndLoggedWithTheId) {
  std::string trailer;
  const grpc::Status status = AddSite("blog.example", "gw-db-1", &trailer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "database unavailable, retry later");
  EXPECT_EQ(trailer, "gw-db-1");
  bool logged = false;
  for (const std::string& line : LogLines()) {
    if (line.find("gw-db-1") != std::string::npos) {
      EXPECT_THAT(line, HasSubstr("request_id=gw-db-1 database error answered UNAVAILABLE"));
      EXPECT_THAT(line, HasSubstr("unused")) << "the detail is logged";
      logged = true;
    }
  }
  EXPECT_TRUE(logged);
  for (const std::string& line : LogLines()) {
    EXPECT_THAT(line, Not(HasSubstr("forged")));
  }
}

}  // namespace
}  // namespace portcullis::verifier::server
