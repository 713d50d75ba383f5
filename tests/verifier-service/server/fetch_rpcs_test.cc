// fetch_rpcs: CheckUrl and SafeFetch, the pure half (validation, clamping, result mapping) and the service on
// 127.0.0.1:0 over a real SafeFetcher with a fake Resolver and a fake HttpClient (no fetch
// sockets).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verifier-service/server/loopback_service.h"
#include "tests/verifier-service/server/service_deps.h"
#include "tests/verifier-service/server/test_tokens.h"
#include "verifier-service/src/server/fetch_rpcs.h"
#include "verifier-service/src/server/verifier_service.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

net::IpAddress Ip(absl::string_view text) { return *net::IpAddress::Parse(text); }

// Answers from a table, at once.
class TableResolver final : public fetch::Resolver {
 public:
  void Resolve(absl::string_view host, Callback callback) override {
    {
      absl::MutexLock lock(&mu_);
      lookups_.push_back(std::string(host));
    }
    const auto it = answers_.find(std::string(host));
    if (it == answers_.end()) {
      std::move(callback)(absl::NotFoundError(absl::StrCat(host, ": NXDOMAIN")));
      return;
    }
    std::move(callback)(it->second);
  }

  std::map<std::string, absl::StatusOr<std::vector<net::IpAddress>>> answers_;
  absl::Mutex mu_;
  std::vector<std::string> lookups_ ABSL_GUARDED_BY(mu_);
};

// Answers from a table by URL, at once, and records every request.
class TableHttpClient final : public fetch::HttpClient {
 public:
  void Fetch(fetch::HttpRequest request, Callback callback) override {
    const std::string href = request.url.href();
    {
      absl::MutexLock lock(&mu_);
      requests_.push_back(request);
    }
    const auto it = responses_.find(href);
    if (it == responses_.end()) {
      std::move(callback)(absl::UnavailableError("connection refused"));
      return;
    }
    absl::StatusOr<fetch::HttpResponse> response = it->second;
    if (response.ok() && static_cast<int64_t>(response->body.size()) > request.max_body_bytes) {
      response = absl::ResourceExhaustedError("body too large");
    }
    std::move(callback)(std::move(response));
  }

  std::vector<fetch::HttpRequest> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

  std::map<std::string, absl::StatusOr<fetch::HttpResponse>> responses_;
  absl::Mutex mu_;
  std::vector<fetch::HttpRequest> requests_ ABSL_GUARDED_BY(mu_);
};

fetch::HttpResponse Html(std::string body) {
  fetch::HttpResponse response;
  response.status = 200;
  response.content_type = "text/html; charset=utf-8";
  response.content_length = absl::StrCat(body.size());
  response.etag = "\"v1\"";
  response.body = std::move(body);
  return response;
}

fetch::HttpResponse Redirect(int status, std::string location) {
  fetch::HttpResponse response;
  response.status = status;
  response.location = std::move(location);
  return response;
}

const fetch::FetchLimits kMax{3, absl::Seconds(5), 1 << 20};

v1::SafeFetchRequest FetchRequest(const std::string& url, int64_t deadline_ms = 0,
                                  int64_t max_body_bytes = 0, int32_t max_redirects = 0) {
  v1::SafeFetchRequest request;
  request.set_url(url);
  request.mutable_limits()->set_deadline_ms(deadline_ms);
  request.mutable_limits()->set_max_body_bytes(max_body_bytes);
  request.mutable_limits()->set_max_redirects(max_redirects);
  return request;
}

TEST(VerifierFetchRpcTest, UnsetLimitsAreTheServersMaximums) {
  const absl::StatusOr<fetch::FetchLimits> limits =
      Validate(FetchRequest("http://a.example/"), kMax);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->total_timeout, absl::Seconds(5));
  EXPECT_EQ(limits->max_body_bytes, 1 << 20);
  EXPECT_EQ(limits->max_redirects, 3);
}

TEST(VerifierFetchRpcTest, LimitsAboveTheMaximumsAreClamped) {
  const absl::StatusOr<fetch::FetchLimits> limits =
      Validate(FetchRequest("http://a.example/", 600000, int64_t{1} << 40, 50), kMax);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->total_timeout, absl::Seconds(5));
  EXPECT_EQ(limits->max_body_bytes, 1 << 20);
  EXPECT_EQ(limits->max_redirects, 3);
}

TEST(VerifierFetchRpcTest, LimitsBelowTheMaximumsAreKept) {
  const absl::StatusOr<fetch::FetchLimits> limits =
      Validate(FetchRequest("http://a.example/", 250, 100, 1), kMax);
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->total_timeout, absl::Milliseconds(250));
  EXPECT_EQ(limits->max_body_bytes, 100);
  EXPECT_EQ(limits->max_redirects, 1);
}

TEST(VerifierFetchRpcTest, RefusesBadRequests) {
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(FetchRequest(""), kMax).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      Validate(FetchRequest("http://a.example/" + std::string(2048, 'a')), kMax).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(FetchRequest("http://a/", -1), kMax).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(FetchRequest("http://a/", 0, -1), kMax).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(Validate(FetchRequest("http://a/", 0, 0, -1), kMax).status()));
  v1::CheckUrlRequest check;
  EXPECT_TRUE(absl::IsInvalidArgument(Validate(check)));
  check.set_url("http://a.example/");
  EXPECT_TRUE(Validate(check).ok());
}

TEST(VerifierFetchRpcTest, MapsAResultToTheResponse) {
  fetch::FetchResult result;
  result.outcome = fetch::FetchOutcome::kHttp429;
  result.detail = "HTTP 429";
  result.final_url = "http://a.example/b";
  result.status = 429;
  result.content_type = "text/plain";
  result.retry_after = "120";
  result.body = "never sent for a failure";
  result.redirects = 1;
  v1::SafeFetchResponse response;
  ToProto(result, {2, absl::Seconds(1), 10}, &response);
  EXPECT_EQ(response.outcome(), "http_429");
  EXPECT_TRUE(response.transient());
  EXPECT_EQ(response.detail(), "HTTP 429");
  EXPECT_EQ(response.final_url(), "http://a.example/b");
  EXPECT_EQ(response.status(), 429);
  ASSERT_EQ(response.headers_size(), 2);
  EXPECT_EQ(response.headers(0).name(), "content-type");
  EXPECT_EQ(response.headers(1).name(), "retry-after");
  EXPECT_EQ(response.headers(1).value(), "120");
  EXPECT_THAT(response.body(), IsEmpty());
  EXPECT_EQ(response.redirects(), 1);
  EXPECT_EQ(response.effective_limits().deadline_ms(), 1000);
  EXPECT_EQ(response.effective_limits().max_body_bytes(), 10);
  EXPECT_EQ(response.effective_limits().max_redirects(), 2);
}

// The service on 127.0.0.1:0 over a real SafeFetcher with fakes behind it.
class VerifierServiceFetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    resolver_.answers_["public.example"] = std::vector<net::IpAddress>{Ip("93.184.216.34")};
    resolver_.answers_["mixed.example"] =
        std::vector<net::IpAddress>{Ip("93.184.216.34"), Ip("10.0.0.1")};
    resolver_.answers_["servfail.example"] = absl::UnavailableError("SERVFAIL");
    http_.responses_["http://public.example/"] = Html("<p>hello</p>");
    http_.responses_["http://public.example/big"] = Html(std::string(5000, 'x'));
    http_.responses_["http://public.example/r1"] = Redirect(301, "/r2");
    http_.responses_["http://public.example/r2"] = Redirect(302, "/");
    http_.responses_["http://public.example/to-private"] = Redirect(302, "http://10.0.0.1/");
    fetch::SafeFetcherConfig config;
    config.max_redirects = 3;
    config.total_timeout = absl::Seconds(5);
    config.max_body_bytes = 4096;
    fetcher_ = *fetch::SafeFetcher::Create(config, &policy_, &resolver_, &http_);
    pool_ = std::make_unique<BlockingPool>(1, 4);
    parts_.deps.pool = pool_.get();
    parts_.deps.policy = &policy_;
    parts_.deps.resolver = &resolver_;
    parts_.deps.fetcher = fetcher_.get();
    server_.Start(parts_);
  }

  void TearDown() override {
    server_.Shutdown();
    pool_->Stop();
  }

  grpc::Status Check(const std::string& url, v1::CheckUrlResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::CheckUrlRequest request;
    request.set_url(url);
    return server_.stub().CheckUrl(&context, request, response);
  }

  grpc::Status Fetch(const v1::SafeFetchRequest& request, v1::SafeFetchResponse* response) {
    grpc::ClientContext context;
    test_tokens::AddBearerToken(context, test_tokens::ProcessToken().token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return server_.stub().SafeFetch(&context, request, response);
  }

  fetch::EgressPolicy policy_;
  TableResolver resolver_;
  TableHttpClient http_;
  std::unique_ptr<fetch::SafeFetcher> fetcher_;
  std::unique_ptr<BlockingPool> pool_;
  test_service::ServiceParts parts_;
  test_service::LoopbackService server_;
};

TEST_F(VerifierServiceFetchTest, CheckUrlAllowsAPublicHostAndListsItsAddresses) {
  v1::CheckUrlResponse response;
  ASSERT_TRUE(Check("http://public.example/", &response).ok());
  EXPECT_TRUE(response.allowed());
  EXPECT_THAT(response.reason(), IsEmpty());
  EXPECT_THAT(response.resolved_addresses(), ElementsAre("93.184.216.34"));
}

TEST_F(VerifierServiceFetchTest, CheckUrlRefusesAMixedAnswer) {
  v1::CheckUrlResponse response;
  ASSERT_TRUE(Check("http://mixed.example/", &response).ok());
  EXPECT_FALSE(response.allowed());
  EXPECT_EQ(response.reason(), "forbidden_address");
  EXPECT_THAT(response.resolved_addresses(), ElementsAre("93.184.216.34", "10.0.0.1"));
}

// Issue 22: an ambiguous numeric spelling is a forbidden URL whatever address it means — the
// loopback 0x7f.1 and the public 010.0.0.1 (8.0.0.1 to us, 10.0.0.1 to c-ares) alike.
TEST_F(VerifierServiceFetchTest, CheckUrlRefusesAnObfuscatedLoopbackLiteralWithoutDns) {
  for (const char* text : {"http://0x7f.1/", "http://010.0.0.1/"}) {
    v1::CheckUrlResponse response;
    ASSERT_TRUE(Check(text, &response).ok());
    EXPECT_FALSE(response.allowed()) << text;
    EXPECT_EQ(response.reason(), "forbidden_url") << text;
    EXPECT_THAT(response.reason_description(), HasSubstr("ambiguous numeric host")) << text;
  }
  absl::MutexLock lock(&resolver_.mu_);
  EXPECT_THAT(resolver_.lookups_, IsEmpty());
}

// An IP literal refused only for its port is a forbidden URL (the address itself is fine), one
// refused for its address a forbidden address; neither is looked up.
TEST_F(VerifierServiceFetchTest, CheckUrlTellsARefusedPortFromARefusedAddress) {
  v1::CheckUrlResponse response;
  ASSERT_TRUE(Check("http://8.8.8.8:22/", &response).ok());
  EXPECT_FALSE(response.allowed());
  EXPECT_EQ(response.reason(), "forbidden_url");
  EXPECT_THAT(response.reason_description(), HasSubstr("port 22 is refused"));
  response.Clear();
  ASSERT_TRUE(Check("http://10.0.0.1/", &response).ok());
  EXPECT_FALSE(response.allowed());
  EXPECT_EQ(response.reason(), "forbidden_address");
  EXPECT_THAT(response.reason_description(), HasSubstr("10.0.0.0/8"));
  absl::MutexLock lock(&resolver_.mu_);
  EXPECT_THAT(resolver_.lookups_, IsEmpty());
}

TEST_F(VerifierServiceFetchTest, CheckUrlNamesEachRefusal) {
  v1::CheckUrlResponse response;
  ASSERT_TRUE(Check("ftp://public.example/", &response).ok());
  EXPECT_EQ(response.reason(), "bad_scheme");
  response.Clear();
  ASSERT_TRUE(Check("http://user:pw@public.example/", &response).ok());
  EXPECT_EQ(response.reason(), "forbidden_url");
  response.Clear();
  ASSERT_TRUE(Check("http://localhost/", &response).ok());
  EXPECT_EQ(response.reason(), "forbidden_url");
  response.Clear();
  ASSERT_TRUE(Check("http://nowhere.example/", &response).ok());
  EXPECT_EQ(response.reason(), "dns_not_found");
  response.Clear();
  ASSERT_TRUE(Check("http://servfail.example/", &response).ok());
  EXPECT_EQ(response.reason(), "dns_temporary");
  response.Clear();
  ASSERT_TRUE(Check("not a url", &response).ok());
  EXPECT_EQ(response.reason(), "bad_url");
  response.Clear();
  EXPECT_EQ(Check("", &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(VerifierServiceFetchTest, SafeFetchReturnsThePageAndItsHeaders) {
  v1::SafeFetchResponse response;
  ASSERT_TRUE(Fetch(FetchRequest("http://public.example/r1"), &response).ok());
  EXPECT_EQ(response.outcome(), "ok");
  EXPECT_FALSE(response.transient());
  EXPECT_EQ(response.final_url(), "http://public.example/");
  EXPECT_EQ(response.status(), 200);
  EXPECT_EQ(response.body(), "<p>hello</p>");
  EXPECT_EQ(response.redirects(), 2);
  ASSERT_EQ(response.headers_size(), 3);
  EXPECT_EQ(response.headers(0).name(), "content-type");
  EXPECT_EQ(response.headers(0).value(), "text/html; charset=utf-8");
  EXPECT_EQ(response.headers(1).name(), "content-length");
  EXPECT_EQ(response.headers(1).value(), "12");
  EXPECT_EQ(response.headers(2).name(), "etag");
}

TEST_F(VerifierServiceFetchTest, SafeFetchClampsTheCallersLimitsToTheServers) {
  v1::SafeFetchResponse response;
  ASSERT_TRUE(
      Fetch(FetchRequest("http://public.example/", 600000, int64_t{1} << 30, 10), &response).ok());
  EXPECT_EQ(response.outcome(), "ok");
  EXPECT_EQ(response.effective_limits().deadline_ms(), 5000);
  EXPECT_EQ(response.effective_limits().max_body_bytes(), 4096);
  EXPECT_EQ(response.effective_limits().max_redirects(), 3);
  const std::vector<fetch::HttpRequest> requests = http_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].max_body_bytes, 4096);
  EXPECT_LE(requests[0].timeout, absl::Seconds(5));
}

TEST_F(VerifierServiceFetchTest, SafeFetchAppliesTheCallersSmallerLimits) {
  v1::SafeFetchResponse response;
  ASSERT_TRUE(Fetch(FetchRequest("http://public.example/", 0, 10), &response).ok());
  EXPECT_EQ(response.outcome(), "too_large");
  EXPECT_THAT(response.body(), IsEmpty());
  response.Clear();
  ASSERT_TRUE(Fetch(FetchRequest("http://public.example/r1", 0, 0, 1), &response).ok());
  EXPECT_EQ(response.outcome(), "too_many_redirects");
  EXPECT_EQ(response.final_url(), "http://public.example/r2");
}

TEST_F(VerifierServiceFetchTest, SafeFetchMapsRefusalsToOutcomesNotErrors) {
  v1::SafeFetchResponse response;
  ASSERT_TRUE(Fetch(FetchRequest("http://public.example/to-private"), &response).ok());
  EXPECT_EQ(response.outcome(), "forbidden_address");
  EXPECT_FALSE(response.transient());
  ASSERT_EQ(response.headers_size(), 1);
  EXPECT_EQ(response.headers(0).name(), "location");
  response.Clear();
  ASSERT_TRUE(Fetch(FetchRequest("http://127.0.0.1/"), &response).ok());
  EXPECT_EQ(response.outcome(), "forbidden_address");
  response.Clear();
  ASSERT_TRUE(Fetch(FetchRequest("http://public.example/big"), &response).ok());
  EXPECT_EQ(response.outcome(), "too_large");
  response.Clear();
  ASSERT_TRUE(Fetch(FetchRequest("http://public.example/missing"), &response).ok());
  EXPECT_EQ(response.outcome(), "connection_failed");
  EXPECT_TRUE(response.transient());
  for (const fetch::HttpRequest& request : http_.requests()) {
    EXPECT_EQ(request.address, Ip("93.184.216.34")) << request.url.href();
  }
  EXPECT_EQ(Fetch(FetchRequest("http://a/", -1), &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace portcullis::verifier::server
