// SafeFetcher with a scripted Resolver and a recording HttpClient (no sockets): the shared SSRF
// vectors of every kind through the whole fetch path, then outcomes, redirects, pinning and the
// concurrency limits by hand.

#include "verifier-service/src/fetch/safe_fetcher.h"

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/shared_testdata.h"
#include "verifier-service/src/fetch/clock.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/ssrf_conformance.h"

namespace portcullis::verifier::fetch {
namespace {

using ::portcullis::net::IpAddress;
using ::testing::ElementsAre;

constexpr char kVectorsPath[] = PORTCULLIS_SSRF_VECTORS;

// ---------------------------------------------------------------------------------------------
// The shared vectors, every kind, through SafeFetcher (ssrf_conformance.h says how each runs).

class VerifierSafeFetcherVectorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(text, kVectorsPath);
    absl::StatusOr<std::vector<SsrfVector>> vectors = ParseSsrfVectors(text);
    ASSERT_TRUE(vectors.ok()) << vectors.status();
    vectors_ = *std::move(vectors);
  }

  // Runs every vector of `kind`, reports each failure with its path, prints the summary line.
  void RunKind(absl::string_view kind, int minimum) {
    int passed = 0;
    int failed = 0;
    for (const SsrfVector& vector : vectors_) {
      if (vector.kind != kind) {
        continue;
      }
      const SsrfVectorRun run = RunSsrfVector(vector);
      if (run.passed) {
        ++passed;
        continue;
      }
      ++failed;
      ADD_FAILURE() << "FAIL " << vector.id << " (" << kind << ") input " << vector.input_json
                    << ": " << absl::StrJoin(run.problems, "; ")
                    << "\n  path: " << DescribeEvents(run.events) << "\n  why: " << vector.why;
    }
    std::cout << kind << ": " << passed << " passed, " << failed << " failed" << std::endl;
    EXPECT_GE(passed + failed, minimum) << "fewer " << kind << " vectors than expected";
  }

  std::vector<SsrfVector> vectors_;
};

TEST_F(VerifierSafeFetcherVectorsTest, RedirectChainVectors) { RunKind("redirect_chain", 9); }
TEST_F(VerifierSafeFetcherVectorsTest, DnsRebindVectors) { RunKind("dns_rebind", 5); }
TEST_F(VerifierSafeFetcherVectorsTest, UrlVectorsThroughTheWholePath) { RunKind("url", 1); }
TEST_F(VerifierSafeFetcherVectorsTest, ResolvedIpVectorsAsDnsAnswers) { RunKind("resolved_ip", 1); }

// ---------------------------------------------------------------------------------------------
// By hand.

IpAddress Ip(absl::string_view text) { return *IpAddress::Parse(text); }

HttpResponse Response(int status, std::string content_type = "text/html",
                      std::optional<std::string> location = std::nullopt) {
  HttpResponse response;
  response.status = status;
  response.content_type = std::move(content_type);
  response.location = std::move(location);
  if (status >= 200 && status < 300) {
    response.body = "<html>hello</html>";
  }
  return response;
}

class VerifierSafeFetcherTest : public ::testing::Test {
 protected:
  // Answers names from dns_ (others NXDOMAIN) and connections from responses_ in order (past
  // them: 404).
  VerifierSafeFetcherTest()
      : resolver_(
            [this](absl::string_view host) -> absl::StatusOr<std::vector<IpAddress>> {
              const auto it = dns_.find(std::string(host));
              if (it == dns_.end()) {
                return absl::NotFoundError(absl::StrCat("NXDOMAIN ", host));
              }
              return it->second;
            },
            &events_),
        http_(
            [this](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
              requests_.push_back(request);
              if (responses_.empty()) {
                return Response(404);
              }
              absl::StatusOr<HttpResponse> next = responses_.front();
              responses_.erase(responses_.begin());
              return next;
            },
            &events_) {}

  FetchResult Run(absl::string_view url, SafeFetcherConfig config = {}) {
    absl::StatusOr<std::unique_ptr<SafeFetcher>> fetcher =
        SafeFetcher::Create(config, &policy_, &resolver_, &http_);
    EXPECT_TRUE(fetcher.ok()) << fetcher.status();
    std::optional<FetchResult> result;
    (*fetcher)->Fetch(url, [&](FetchResult done) { result = std::move(done); });
    EXPECT_TRUE(result.has_value()) << "synchronous fakes finish the fetch inside Fetch()";
    return result.value_or(FetchResult{});
  }

  std::vector<std::string> Connections() const {
    std::vector<std::string> lines;
    for (const FetchEvent& event : events_) {
      if (event.kind == FetchEvent::Kind::kConnect) {
        lines.push_back(absl::StrCat(event.url, " @ ", event.address->ToString()));
      }
    }
    return lines;
  }

  EgressPolicy policy_;
  std::map<std::string, std::vector<IpAddress>> dns_ = {
      {"a.test", {Ip("93.184.216.34")}},
      {"b.test", {Ip("93.184.216.35")}},
      {"c.test", {Ip("93.184.216.36")}},
      {"d.test", {Ip("93.184.216.37")}},
      {"internal.test", {Ip("10.0.0.5")}},
      {"mixed.test", {Ip("93.184.216.34"), Ip("169.254.169.254")}},
      {"v6.test", {Ip("2606:4700:4700::1111"), Ip("93.184.216.34")}},
  };
  std::vector<absl::StatusOr<HttpResponse>> responses_;
  std::vector<HttpRequest> requests_;
  std::vector<FetchEvent> events_;
  ScriptedResolver resolver_;
  RecordingHttpClient http_;
};

TEST_F(VerifierSafeFetcherTest, FetchesHtmlAndPinsTheCheckedAnswer) {
  responses_ = {Response(200, "text/html; charset=utf-8")};
  const FetchResult result = Run("http://v6.test/page");
  EXPECT_EQ(result.outcome, FetchOutcome::kOk) << result.detail;
  EXPECT_EQ(result.final_url, "http://v6.test/page");
  EXPECT_EQ(result.status, 200);
  EXPECT_EQ(result.body, "<html>hello</html>");
  EXPECT_THAT(Connections(), ElementsAre("http://v6.test/page @ 2606:4700:4700::1111"));
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].max_body_bytes, 1 << 20);
  EXPECT_LE(requests_[0].timeout, absl::Seconds(5));
  EXPECT_EQ(resolver_.lookups(), 1);
}

// Outbound deliveries (issue 20) go through the same guard as a POST.
TEST_F(VerifierSafeFetcherTest, PostsThroughTheSameChecksAndAnyTwoXxIsOk) {
  absl::StatusOr<std::unique_ptr<SafeFetcher>> fetcher =
      SafeFetcher::Create({}, &policy_, &resolver_, &http_);
  ASSERT_TRUE(fetcher.ok());
  const auto post = [&](absl::string_view url, int max_redirects) {
    std::optional<FetchResult> result;
    (*fetcher)->Post(url, OutboundPost{R"({"type":"ping"})", {{"webhook-id", "msg_1"}}},
                     {max_redirects, absl::Seconds(2), 4096},
                     [&](FetchResult done) { result = std::move(done); });
    return result.value_or(FetchResult{});
  };
  responses_ = {Response(204, "application/json")};
  FetchResult result = post("http://a.test/hook", 0);
  EXPECT_EQ(result.outcome, FetchOutcome::kOk) << result.detail;
  EXPECT_EQ(result.status, 204);
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].method, "POST");
  EXPECT_EQ(requests_[0].post_body, R"({"type":"ping"})");
  EXPECT_THAT(requests_[0].headers,
              ElementsAre(std::pair<std::string, std::string>("webhook-id", "msg_1")));
  EXPECT_TRUE(requests_[0].body_media_types.empty());
  EXPECT_LE(requests_[0].timeout, absl::Seconds(2));
  // The same refusals as a fetch: a private answer is never connected to.
  result = post("http://internal.test/hook", 0);
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress);
  result = post("http://169.254.169.254/", 0);
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(requests_.size(), 1u);
  // No redirects for deliveries; 410 and 503 keep their status and Retry-After.
  responses_ = {Response(302, "text/html", "http://b.test/")};
  EXPECT_EQ(post("http://a.test/hook", 0).outcome, FetchOutcome::kTooManyRedirects);
  HttpResponse busy = Response(503);
  busy.retry_after = "2";
  responses_ = {Response(410), busy};
  EXPECT_EQ(post("http://a.test/hook", 0).outcome, FetchOutcome::kGone);
  result = post("http://a.test/hook", 0);
  EXPECT_EQ(result.outcome, FetchOutcome::kHttp5xx);
  EXPECT_EQ(result.retry_after, std::optional<std::string>("2"));
  EXPECT_EQ(requests_.size(), 4u);
}

TEST_F(VerifierSafeFetcherTest, Follows301Then302Then200OneLookupPerHop) {
  responses_ = {Response(301, "text/html", "http://b.test/one"),
                Response(302, "text/html", "/two?x=1"), Response(200)};
  const FetchResult result = Run("http://a.test/");
  EXPECT_EQ(result.outcome, FetchOutcome::kOk) << result.detail;
  EXPECT_EQ(result.final_url, "http://b.test/two?x=1");
  EXPECT_EQ(result.redirects, 2);
  EXPECT_THAT(Connections(),
              ElementsAre("http://a.test/ @ 93.184.216.34", "http://b.test/one @ 93.184.216.35",
                          "http://b.test/two?x=1 @ 93.184.216.35"));
  EXPECT_EQ(resolver_.lookups(), 3);  // b.test again for the third hop: never a cached answer
}

TEST_F(VerifierSafeFetcherTest, ThreeRedirectsAllowedFourthRefused) {
  responses_ = {Response(302, "", "http://b.test/"), Response(302, "", "http://c.test/"),
                Response(302, "", "http://d.test/"), Response(200)};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kOk);

  events_.clear();
  responses_ = {Response(302, "", "http://b.test/"), Response(302, "", "http://c.test/"),
                Response(302, "", "http://d.test/"), Response(302, "", "http://a.test/"),
                Response(200)};
  const FetchResult result = Run("http://a.test/");
  EXPECT_EQ(result.outcome, FetchOutcome::kTooManyRedirects);
  EXPECT_FALSE(IsTransient(result.outcome));
  EXPECT_EQ(Connections().size(), 4u);
}

TEST_F(VerifierSafeFetcherTest, RedirectToAForbiddenAddressNeverConnects) {
  responses_ = {Response(302, "", "http://internal.test/admin")};
  FetchResult result = Run("http://a.test/");
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress);
  EXPECT_THAT(result.detail, ::testing::HasSubstr("10.0.0.5"));
  EXPECT_THAT(Connections(), ElementsAre("http://a.test/ @ 93.184.216.34"));

  events_.clear();
  responses_ = {Response(307, "", "http://[::ffff:169.254.169.254]/")};
  result = Run("http://a.test/");
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(Connections().size(), 1u);
  EXPECT_EQ(resolver_.lookups(), 3);  // a.test twice and internal.test: the literal never
}

TEST_F(VerifierSafeFetcherTest, MixedAnswerRefusedWhole) {
  const FetchResult result = Run("http://mixed.test/");
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenAddress);
  EXPECT_THAT(result.detail, ::testing::HasSubstr("169.254.169.254"));
  EXPECT_TRUE(Connections().empty());
}

TEST_F(VerifierSafeFetcherTest, RedirectSchemeAndUrlRules) {
  responses_ = {Response(302, "", "ftp://b.test/file")};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kBadScheme);
  responses_ = {Response(302, "", "http://user:pw@b.test/")};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kForbiddenUrl);
  responses_ = {Response(302, "", "http://b.test:6379/")};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kForbiddenUrl);
  responses_ = {Response(302, "", "http://metadata.google.internal/")};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kForbiddenUrl);
  responses_ = {Response(302, "", "http://[::1/")};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kBadUrl);
  responses_ = {Response(302, "")};
  EXPECT_EQ(Run("http://a.test/").outcome, FetchOutcome::kBadRedirect);
  EXPECT_EQ(Run("gopher://a.test/").outcome, FetchOutcome::kBadScheme);
  EXPECT_EQ(Run("http://127.0.0.1/").outcome, FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(Run("http://localhost/").outcome, FetchOutcome::kForbiddenUrl);
  for (const std::string& connection : Connections()) {
    EXPECT_THAT(connection, ::testing::StartsWith("http://a.test/ @ 93.184.216.34"));
  }
}

// The policy's kind of refusal is the outcome: an IP literal refused for its port is a forbidden
// URL (the port is refused, whatever the address), one refused for its address a forbidden address.
TEST_F(VerifierSafeFetcherTest, ALiteralRefusedForItsPortIsAForbiddenUrl) {
  FetchResult result = Run("http://8.8.8.8:22/");
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenUrl);
  EXPECT_THAT(result.detail, ::testing::HasSubstr("port 22 is refused"));
  EXPECT_EQ(Run("http://10.0.0.1:22/").outcome, FetchOutcome::kForbiddenUrl);
  EXPECT_EQ(Run("http://10.0.0.1/").outcome, FetchOutcome::kForbiddenAddress);
  responses_ = {Response(302, "", "http://8.8.8.8:22/")};
  result = Run("http://a.test/");
  EXPECT_EQ(result.outcome, FetchOutcome::kForbiddenUrl);
  EXPECT_THAT(result.detail, ::testing::HasSubstr("port 22 is refused"));
  EXPECT_THAT(Connections(), ElementsAre("http://a.test/ @ 93.184.216.34"));
}

TEST_F(VerifierSafeFetcherTest, StatusClasses) {
  const auto outcome_of = [&](absl::StatusOr<HttpResponse> response) {
    responses_ = {std::move(response)};
    return Run("http://a.test/");
  };
  EXPECT_EQ(outcome_of(Response(404)).outcome, FetchOutcome::kHttp4xx);
  EXPECT_EQ(outcome_of(Response(404)).status, 404);
  EXPECT_EQ(outcome_of(Response(410)).outcome, FetchOutcome::kGone);
  EXPECT_EQ(outcome_of(Response(500)).outcome, FetchOutcome::kHttp5xx);
  HttpResponse limited = Response(429);
  limited.retry_after = "120";
  const FetchResult too_many = outcome_of(limited);
  EXPECT_EQ(too_many.outcome, FetchOutcome::kHttp429);
  EXPECT_EQ(too_many.retry_after, "120");
  EXPECT_TRUE(IsTransient(too_many.outcome));
  HttpResponse pdf = Response(200, "application/pdf");
  pdf.body.clear();
  pdf.body_skipped = true;
  const FetchResult unsupported = outcome_of(pdf);
  EXPECT_EQ(unsupported.outcome, FetchOutcome::kUnsupportedContentType);
  EXPECT_TRUE(unsupported.body.empty());
  EXPECT_EQ(outcome_of(Response(200, "application/xhtml+xml")).outcome, FetchOutcome::kOk);
  EXPECT_EQ(outcome_of(absl::ResourceExhaustedError("big")).outcome, FetchOutcome::kTooLarge);
  EXPECT_EQ(outcome_of(absl::DeadlineExceededError("slow")).outcome, FetchOutcome::kTimeout);
  EXPECT_EQ(outcome_of(absl::UnavailableError("reset")).outcome, FetchOutcome::kConnectionFailed);
  EXPECT_EQ(outcome_of(absl::PermissionDeniedError("socket refused")).outcome,
            FetchOutcome::kForbiddenAddress);
  EXPECT_EQ(outcome_of(absl::FailedPreconditionError("cert")).outcome, FetchOutcome::kTlsFailed);
}

// Issue 17: a fetch may ask for other media types (the avatar proxy: images); the body is read,
// and accepted, only for those, and HTML is then refused like any other type.
TEST_F(VerifierSafeFetcherTest, AFetchTakesTheMediaTypesItAsksFor) {
  absl::StatusOr<std::unique_ptr<SafeFetcher>> fetcher =
      SafeFetcher::Create({}, &policy_, &resolver_, &http_);
  ASSERT_TRUE(fetcher.ok()) << fetcher.status();
  FetchLimits images = (*fetcher)->max_limits();
  images.media_types = {"image/png", "image/jpeg"};
  const auto fetch = [&](HttpResponse response) {
    responses_ = {std::move(response)};
    std::optional<FetchResult> result;
    (*fetcher)->Fetch("http://a.test/a.png", images,
                      [&](FetchResult done) { result = std::move(done); });
    EXPECT_TRUE(result.has_value());
    return result.value_or(FetchResult{});
  };
  const FetchResult png = fetch(Response(200, "image/png"));
  EXPECT_EQ(png.outcome, FetchOutcome::kOk);
  ASSERT_FALSE(requests_.empty());
  EXPECT_THAT(requests_.back().body_media_types, ::testing::ElementsAre("image/png", "image/jpeg"));
  const FetchResult html = fetch(Response(200, "text/html"));
  EXPECT_EQ(html.outcome, FetchOutcome::kUnsupportedContentType);
  EXPECT_EQ(html.detail, "content type \"text/html\" is not image/png or image/jpeg");
  EXPECT_TRUE(html.body.empty());
}

TEST_F(VerifierSafeFetcherTest, DnsFailures) {
  EXPECT_EQ(Run("http://nowhere.test/").outcome, FetchOutcome::kDnsNotFound);
  EXPECT_FALSE(IsTransient(FetchOutcome::kDnsNotFound));
  ScriptedResolver servfail(
      [](absl::string_view) -> absl::StatusOr<std::vector<IpAddress>> {
        return absl::UnavailableError("SERVFAIL");
      },
      &events_);
  auto fetcher = *SafeFetcher::Create({}, &policy_, &servfail, &http_);
  std::optional<FetchResult> result;
  fetcher->Fetch("http://a.test/", [&](FetchResult done) { result = std::move(done); });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome, FetchOutcome::kDnsTemporary);
  EXPECT_TRUE(IsTransient(result->outcome));
  EXPECT_TRUE(Connections().empty());
}

TEST_F(VerifierSafeFetcherTest, AllowListLetsLoopbackThroughForTests) {
  EgressPolicyConfig config;
  config.allow = {*net::Cidr::Parse("127.0.0.0/8")};
  config.extra_allowed_ports = {8080};
  policy_ = *EgressPolicy::Create(config);
  responses_ = {Response(200)};
  EXPECT_EQ(Run("http://127.0.0.1:8080/").outcome, FetchOutcome::kOk);
  EXPECT_EQ(resolver_.lookups(), 0);
}

TEST_F(VerifierSafeFetcherTest, CreateRefusesBadLimits) {
  SafeFetcherConfig config;
  config.max_per_host = 0;
  EXPECT_EQ(SafeFetcher::Create(config, &policy_, &resolver_, &http_).status().code(),
            absl::StatusCode::kInvalidArgument);
  config = {};
  config.total_timeout = absl::ZeroDuration();
  EXPECT_FALSE(SafeFetcher::Create(config, &policy_, &resolver_, &http_).ok());
  EXPECT_FALSE(SafeFetcher::Create({}, nullptr, &resolver_, &http_).ok());
}

// A clock that moves only when told: the deadline tests move it instead of sleeping.
class FakeClock final : public Clock {
 public:
  absl::Time Now() const override { return now_; }
  void Advance(absl::Duration by) { now_ += by; }

 private:
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
};

// An HttpClient that holds every request until the test answers it.
class HeldHttpClient final : public HttpClient {
 public:
  void Fetch(HttpRequest request, Callback callback) override {
    held.push_back({std::move(request), std::move(callback)});
  }
  void Answer(size_t index, absl::StatusOr<HttpResponse> response) {
    Callback callback = std::move(held[index].second);
    std::move(callback)(std::move(response));
  }
  std::vector<std::pair<HttpRequest, Callback>> held;
};

TEST_F(VerifierSafeFetcherTest, PerHostAndGlobalLimitsQueueInsteadOfConnecting) {
  HeldHttpClient held;
  SafeFetcherConfig config;
  config.max_per_host = 2;
  config.max_in_flight = 4;
  auto fetcher = *SafeFetcher::Create(config, &policy_, &resolver_, &held);
  std::vector<FetchResult> results;
  for (int i = 0; i < 4; ++i) {
    fetcher->Fetch(absl::StrCat("http://a.test/", i),
                   [&](FetchResult done) { results.push_back(std::move(done)); });
  }
  fetcher->Fetch("http://b.test/", [&](FetchResult done) { results.push_back(std::move(done)); });
  // Two to a.test at once; the other two wait; b.test waits for a global slot.
  ASSERT_EQ(held.held.size(), 2u);
  EXPECT_EQ(held.held[0].first.url.href(), "http://a.test/0");
  EXPECT_EQ(held.held[1].first.url.href(), "http://a.test/1");

  held.Answer(0, Response(200));  // a.test/2 takes the host slot, b.test the global slot
  ASSERT_EQ(held.held.size(), 4u);
  EXPECT_EQ(held.held[2].first.url.href(), "http://a.test/2");
  EXPECT_EQ(held.held[3].first.url.href(), "http://b.test/");
  held.Answer(3, Response(200));
  held.Answer(1, Response(500));
  ASSERT_EQ(held.held.size(), 5u);
  held.Answer(2, Response(200));
  held.Answer(4, Response(200));
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].outcome, FetchOutcome::kOk);
  EXPECT_EQ(results[1].final_url, "http://b.test/");
  EXPECT_EQ(results[2].outcome, FetchOutcome::kHttp5xx);
}

TEST_F(VerifierSafeFetcherTest, ManyNamesForOneAddressShareItsLimit) {
  // A victim's wildcard DNS: every name a new host, every answer the same address.
  for (int i = 0; i < 5; ++i) {
    dns_[absl::StrCat("x", i, ".victim.test")] = {Ip("93.184.216.99")};
  }
  HeldHttpClient held;
  SafeFetcherConfig config;
  config.max_per_address = 2;
  auto fetcher = *SafeFetcher::Create(config, &policy_, &resolver_, &held);
  int finished = 0;
  for (int i = 0; i < 5; ++i) {
    fetcher->Fetch(absl::StrCat("http://x", i, ".victim.test/"), [&](FetchResult) { ++finished; });
  }
  ASSERT_EQ(held.held.size(), 2u);
  held.Answer(0, Response(200));
  ASSERT_EQ(held.held.size(), 3u);
  EXPECT_EQ(held.held[2].first.url.host(), "x2.victim.test");
  held.Answer(1, Response(200));
  held.Answer(2, Response(200));
  ASSERT_EQ(held.held.size(), 5u);
  held.Answer(3, Response(200));
  held.Answer(4, Response(200));
  EXPECT_EQ(finished, 5);
}

// Holds the first request; fails every later one at once (as a client shutting down does).
class FirstHeldThenFailingHttpClient final : public HttpClient {
 public:
  void Fetch(HttpRequest, Callback callback) override {
    if (first == nullptr) {
      first = std::move(callback);
      return;
    }
    std::move(callback)(absl::CancelledError("shutting down"));
  }
  Callback first;
};

TEST_F(VerifierSafeFetcherTest, AQueueEmptyingAtOnceDoesNotRecurse) {
  // 20,000 fetches wait for one address; when the first ends, each next one fails at once and
  // releases the slot again. Run nested, that is a stack 20,000 grants deep.
  constexpr int kWaiting = 20000;
  FirstHeldThenFailingHttpClient http;
  SafeFetcherConfig config;
  config.max_in_flight = kWaiting + 1;
  config.max_per_host = kWaiting + 1;
  config.max_per_address = 1;
  // On a fake clock: queueing 20,000 fetches takes seconds on a loaded machine, and on real time
  // the last ones would start past their hop minimum and end kTimeout instead.
  FakeClock clock;
  auto fetcher = *SafeFetcher::Create(config, &policy_, &resolver_, &http, nullptr, &clock);
  int cancelled = 0;
  for (int i = 0; i <= kWaiting; ++i) {
    fetcher->Fetch("http://93.184.216.34/", [&](FetchResult result) {
      cancelled += result.outcome == FetchOutcome::kCancelled ? 1 : 0;
    });
  }
  ASSERT_NE(http.first, nullptr);
  std::move(http.first)(Response(200));
  EXPECT_EQ(cancelled, kWaiting);
}

TEST_F(VerifierSafeFetcherTest, TheCallerMayDestroyTheFetcherInsideDone) {
  responses_ = {Response(200)};
  std::unique_ptr<SafeFetcher> fetcher = *SafeFetcher::Create({}, &policy_, &resolver_, &http_);
  std::optional<FetchOutcome> outcome;
  fetcher->Fetch("http://a.test/", [&](FetchResult result) {
    outcome = result.outcome;
    fetcher.reset();  // every slot is already given back
  });
  EXPECT_EQ(outcome, FetchOutcome::kOk);
  EXPECT_EQ(fetcher, nullptr);
}

TEST(VerifierMinimumHopTimeTest, AQuarterSecondOrATenthOfTheBudget) {
  EXPECT_EQ(MinimumHopTime(absl::Seconds(5)), absl::Milliseconds(250));
  EXPECT_EQ(MinimumHopTime(absl::Seconds(60)), absl::Milliseconds(250));
  EXPECT_EQ(MinimumHopTime(absl::Seconds(2)), absl::Milliseconds(200));
  EXPECT_EQ(MinimumHopTime(absl::Milliseconds(500)), absl::Milliseconds(50));
  EXPECT_EQ(MinimumHopTime(absl::ZeroDuration()), absl::ZeroDuration());
}

// The deadline tests use a 500 ms budget (50 ms minimum per hop) on a fake clock: the first hop is
// held while the clock moves 460 ms, so what comes after it has less than the minimum left.
constexpr absl::Duration kShortBudget = absl::Milliseconds(500);
constexpr absl::Duration kMostOfTheBudget = absl::Milliseconds(460);

// Two fetches of one host with one host slot and a 500 ms budget; the first is held while the
// clock moves `waited`, then answered 200. Returns both results, in the order they ended.
std::vector<FetchResult> SecondFetchAfterWaiting(const EgressPolicy& policy, Resolver& resolver,
                                                 absl::Duration waited, size_t& requests) {
  HeldHttpClient held;
  FakeClock clock;
  SafeFetcherConfig config;
  config.max_per_host = 1;
  config.total_timeout = kShortBudget;
  auto fetcher = *SafeFetcher::Create(config, &policy, &resolver, &held, nullptr, &clock);
  std::vector<FetchResult> results;
  for (int i = 0; i < 2; ++i) {
    fetcher->Fetch(absl::StrCat("http://a.test/", i),
                   [&](FetchResult done) { results.push_back(std::move(done)); });
  }
  EXPECT_EQ(held.held.size(), 1u);
  clock.Advance(waited);
  held.Answer(0, Response(200));
  if (held.held.size() == 2u) {
    held.Answer(1, Response(200));
  }
  requests = held.held.size();
  return results;
}

TEST_F(VerifierSafeFetcherTest, TheHopMinimumIsMeasuredOnTheGivenClock) {
  // Exactly the minimum (50 ms) left when the slot frees: the hop starts. One microsecond less:
  // it does not. No real time passes in either run.
  size_t requests = 0;
  std::vector<FetchResult> at_minimum = SecondFetchAfterWaiting(
      policy_, resolver_, kShortBudget - MinimumHopTime(kShortBudget), requests);
  ASSERT_EQ(at_minimum.size(), 2u);
  EXPECT_EQ(at_minimum[1].outcome, FetchOutcome::kOk);
  EXPECT_EQ(requests, 2u);
  std::vector<FetchResult> past_minimum = SecondFetchAfterWaiting(
      policy_, resolver_, kShortBudget - MinimumHopTime(kShortBudget) + absl::Microseconds(1),
      requests);
  ASSERT_EQ(past_minimum.size(), 2u);
  EXPECT_EQ(past_minimum[0].outcome, FetchOutcome::kTimeout);
  EXPECT_EQ(requests, 1u);
}

TEST_F(VerifierSafeFetcherTest, AFetchThatWaitedForItsHostSlotPastTheMinimumNeverConnects) {
  size_t requests = 0;
  const std::vector<FetchResult> results =
      SecondFetchAfterWaiting(policy_, resolver_, kMostOfTheBudget, requests);
  // The slot passes on before the first fetch reports: the second one ends first.
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].final_url, "http://a.test/0");
  EXPECT_EQ(results[1].outcome, FetchOutcome::kOk);
  // The second one got the slot with ~40 ms left: refused as a timeout, the origin never asked.
  EXPECT_EQ(results[0].final_url, "http://a.test/1");
  EXPECT_EQ(results[0].outcome, FetchOutcome::kTimeout);
  EXPECT_TRUE(IsTransient(results[0].outcome));
  EXPECT_EQ(requests, 1u) << "no request for a hop that could not finish";
}

TEST_F(VerifierSafeFetcherTest, AFetchThatWaitedBrieflyStillConnects) {
  size_t requests = 0;
  const std::vector<FetchResult> results =
      SecondFetchAfterWaiting(policy_, resolver_, absl::ZeroDuration(), requests);
  EXPECT_EQ(requests, 2u);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].outcome, FetchOutcome::kOk);
  EXPECT_EQ(results[1].outcome, FetchOutcome::kOk);
}

TEST_F(VerifierSafeFetcherTest, ARedirectLateInTheDeadlineIsNotFollowed) {
  HeldHttpClient held;
  FakeClock clock;
  SafeFetcherConfig config;
  config.total_timeout = kShortBudget;
  auto fetcher = *SafeFetcher::Create(config, &policy_, &resolver_, &held, nullptr, &clock);
  std::optional<FetchResult> result;
  fetcher->Fetch("http://a.test/", [&](FetchResult done) { result = std::move(done); });
  ASSERT_EQ(held.held.size(), 1u);
  clock.Advance(kMostOfTheBudget);
  held.Answer(0, Response(302, "", "http://b.test/next"));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome, FetchOutcome::kTimeout);
  EXPECT_EQ(result->final_url, "http://b.test/next");
  EXPECT_EQ(held.held.size(), 1u) << "b.test never contacted";
}

TEST(VerifierFetchOutcomeTest, NamesAndClasses) {
  EXPECT_EQ(FetchOutcomeName(FetchOutcome::kForbiddenAddress), "forbidden_address");
  EXPECT_EQ(FetchOutcomeName(FetchOutcome::kHttp429), "http_429");
  EXPECT_TRUE(IsTransient(FetchOutcome::kTimeout));
  EXPECT_TRUE(IsTransient(FetchOutcome::kDnsTemporary));
  EXPECT_FALSE(IsTransient(FetchOutcome::kGone));
  EXPECT_FALSE(IsTransient(FetchOutcome::kTooLarge));
  EXPECT_EQ(MediaTypeOf(" Text/HTML ; charset=UTF-8"), "text/html");
}

}  // namespace
}  // namespace portcullis::verifier::fetch
