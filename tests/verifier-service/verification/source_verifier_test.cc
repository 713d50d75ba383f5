// SourceVerifier over a scripted PageFetcher and a scripted SourceAnalyzer: which fetch outcome
// becomes which verification outcome, what the analyzer is given, and the rel=author page step.

#include "verifier-service/src/verification/source_verifier.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::verification {
namespace {

using fetch::FetchOutcome;
using queue::VerificationOutcome;

fetch::FetchResult Page(std::string body, std::string final_url) {
  fetch::FetchResult result;
  result.body = std::move(body);
  result.final_url = std::move(final_url);
  result.status = 200;
  result.content_type = "text/html";
  return result;
}

fetch::FetchResult Failure(FetchOutcome outcome) {
  fetch::FetchResult result;
  result.outcome = outcome;
  result.detail = "scripted";
  return result;
}

class ScriptedFetcher final : public PageFetcher {
 public:
  fetch::FetchResult Fetch(absl::string_view url, const fetch::FetchLimits& limits) override {
    absl::MutexLock lock(&mu_);
    calls.push_back({std::string(url), limits});
    const auto it = pages.find(std::string(url));
    if (it == pages.end()) {
      return Failure(FetchOutcome::kHttp4xx);
    }
    return it->second;
  }

  struct Call {
    std::string url;
    fetch::FetchLimits limits;
  };
  std::map<std::string, fetch::FetchResult> pages;
  std::vector<Call> calls;
  absl::Mutex mu_;
};

// Links when the body contains the target; names the author page when the body says
// "author-page:URL"; reads an author page's body as the author's name.
class ScriptedAnalyzer final : public SourceAnalyzer {
 public:
  SourceAnalysis Analyze(absl::string_view body, const url::Url& final_url,
                         absl::string_view target) const override {
    bases.push_back(final_url.href());
    SourceAnalysis analysis;
    analysis.links_to_target = absl::StrContains(body, target);
    if (!analysis.links_to_target) {
      analysis.links_to_target_host = {"https://bob.example/post-10"};
      return analysis;
    }
    analysis.content.type = "reply";
    analysis.content.content_text = "Nice post";
    const size_t author = body.find("author-page:");
    if (author != absl::string_view::npos) {
      analysis.author_page_url = std::string(body.substr(author + 12));
    } else {
      analysis.content.author_name = "On-page Alice";
    }
    return analysis;
  }

  AuthorCard AuthorFromPage(absl::string_view body, absl::string_view,
                            const url::Url& final_url) const override {
    return AuthorCard{std::string(body), final_url.href(), "", ""};
  }

  mutable std::vector<std::string> bases;
};

class VerifierSourceVerifierTest : public ::testing::Test {
 protected:
  VerificationOutcome Verify(const std::string& source = "https://alice.example/reply") {
    store::JobRecord job;
    job.source = source;
    job.target = kTarget;
    return verifier_.Verify(job);
  }

  static constexpr char kTarget[] = "https://bob.example/post";
  ScriptedFetcher fetcher_;
  ScriptedAnalyzer analyzer_;
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  SourceVerifier verifier_{fetcher_, analyzer_, SourceVerifierConfig{}, [this] { return now_; }};
};

TEST_F(VerifierSourceVerifierTest, ALinkingPageIsVerifiedWithWhatItSays) {
  fetcher_.pages["https://alice.example/reply"] =
      Page("<a href=https://bob.example/post>", "https://alice.example/reply");
  const VerificationOutcome outcome = Verify();
  EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified);
  EXPECT_EQ(outcome.content.type, "reply");
  EXPECT_EQ(outcome.content.content_text, "Nice post");
  EXPECT_EQ(outcome.content.author_name, "On-page Alice");
  ASSERT_EQ(fetcher_.calls.size(), 1u);  // No author page needed.
  EXPECT_EQ(fetcher_.calls[0].limits.total_timeout, absl::Seconds(5));
}

TEST_F(VerifierSourceVerifierTest, TheFinalUrlAfterRedirectsIsTheBase) {
  fetcher_.pages["https://alice.example/old"] =
      Page("<a href=https://bob.example/post>", "https://www.alice.example/new/reply");
  EXPECT_EQ(Verify("https://alice.example/old").kind, VerificationOutcome::Kind::kVerified);
  ASSERT_EQ(analyzer_.bases.size(), 1u);
  EXPECT_EQ(analyzer_.bases[0], "https://www.alice.example/new/reply");
}

TEST_F(VerifierSourceVerifierTest, APageWithoutTheLinkFailsNoLinkWithTheNearMisses) {
  fetcher_.pages["https://alice.example/reply"] =
      Page("<a href=https://bob.example/post-10>", "https://alice.example/reply");
  fetcher_.pages["https://alice.example/reply"].body = "no link here";
  const VerificationOutcome outcome = Verify();
  EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kFailed);
  EXPECT_EQ(outcome.reason, "no_link");
  EXPECT_EQ(outcome.links_to_target_host, store::LinkDiagnostic{"https://bob.example/post-10"});
}

TEST_F(VerifierSourceVerifierTest, GoneIsSourceGone) {
  fetcher_.pages["https://alice.example/reply"] = Failure(FetchOutcome::kGone);
  const VerificationOutcome outcome = Verify();
  EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kFailed);
  EXPECT_EQ(outcome.reason, "source_gone");
}

TEST_F(VerifierSourceVerifierTest, PermanentFetchFailuresFailWithTheFetchersReason) {
  const std::map<FetchOutcome, std::string> permanent = {
      {FetchOutcome::kBadUrl, "bad_url"},
      {FetchOutcome::kBadScheme, "bad_scheme"},
      {FetchOutcome::kForbiddenUrl, "forbidden_url"},
      {FetchOutcome::kForbiddenAddress, "forbidden_address"},
      {FetchOutcome::kDnsNotFound, "dns_not_found"},
      {FetchOutcome::kTooManyRedirects, "too_many_redirects"},
      {FetchOutcome::kBadRedirect, "bad_redirect"},
      {FetchOutcome::kTooLarge, "too_large"},
      {FetchOutcome::kUnsupportedContentType, "unsupported_content_type"},
      {FetchOutcome::kHttp4xx, "http_4xx"},
      {FetchOutcome::kTlsFailed, "tls_failed"},
  };
  for (const auto& [fetch_outcome, reason] : permanent) {
    fetcher_.pages["https://alice.example/reply"] = Failure(fetch_outcome);
    const VerificationOutcome outcome = Verify();
    EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kFailed) << reason;
    EXPECT_EQ(outcome.reason, reason);
    EXPECT_TRUE(outcome.links_to_target_host.empty());
  }
}

TEST_F(VerifierSourceVerifierTest, TransientFetchFailuresAreRetried) {
  const std::map<FetchOutcome, std::string> transient = {
      {FetchOutcome::kTimeout, "timeout"},
      {FetchOutcome::kConnectionFailed, "connection_failed"},
      {FetchOutcome::kDnsTemporary, "dns_temporary"},
      {FetchOutcome::kHttp5xx, "http_5xx"},
      {FetchOutcome::kHttp429, "http_429"},
      {FetchOutcome::kCancelled, "cancelled"},
  };
  for (const auto& [fetch_outcome, reason] : transient) {
    fetcher_.pages["https://alice.example/reply"] = Failure(fetch_outcome);
    const VerificationOutcome outcome = Verify();
    EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kRetry) << reason;
    EXPECT_EQ(outcome.reason, reason);
  }
}

TEST_F(VerifierSourceVerifierTest, TheRelAuthorPageIsFetchedWithItsOwnSmallBudgetAndCached) {
  fetcher_.pages["https://alice.example/reply"] =
      Page("https://bob.example/post author-page:https://alice.example/about",
           "https://alice.example/reply");
  fetcher_.pages["https://alice.example/about"] = Page("Alice", "https://alice.example/about");
  VerificationOutcome outcome = Verify();
  ASSERT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified);
  EXPECT_EQ(outcome.content.author_name, "Alice");
  EXPECT_EQ(outcome.content.author_url, "https://alice.example/about");
  ASSERT_EQ(fetcher_.calls.size(), 2u);
  EXPECT_EQ(fetcher_.calls[1].url, "https://alice.example/about");
  EXPECT_EQ(fetcher_.calls[1].limits.total_timeout, absl::Seconds(2));
  EXPECT_EQ(fetcher_.calls[1].limits.max_body_bytes, 256 * 1024);
  EXPECT_EQ(fetcher_.calls[1].limits.max_redirects, 1);

  // A second mention by the same author: the page is not fetched again while cached.
  outcome = Verify();
  EXPECT_EQ(outcome.content.author_name, "Alice");
  EXPECT_EQ(fetcher_.calls.size(), 3u);
  // After the TTL it is.
  now_ += absl::Minutes(11);
  Verify();
  EXPECT_EQ(fetcher_.calls.size(), 5u);
}

TEST_F(VerifierSourceVerifierTest, AnAuthorPageThatCannotBeHadNeverFailsTheMention) {
  fetcher_.pages["https://alice.example/reply"] =
      Page("https://bob.example/post author-page:https://alice.example/about",
           "https://alice.example/reply");
  // Permanent (404): verified without an author, and not asked again soon.
  fetcher_.pages["https://alice.example/about"] = Failure(FetchOutcome::kHttp4xx);
  VerificationOutcome outcome = Verify();
  EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified);
  EXPECT_EQ(outcome.content.author_name, "");
  Verify();
  EXPECT_EQ(fetcher_.calls.size(), 3u);

  // Transient (503): verified without an author, asked again next time.
  fetcher_.calls.clear();
  fetcher_.pages["https://carol.example/reply"] =
      Page("https://bob.example/post author-page:https://carol.example/about",
           "https://carol.example/reply");
  fetcher_.pages["https://carol.example/about"] = Failure(FetchOutcome::kHttp5xx);
  outcome = Verify("https://carol.example/reply");
  EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kVerified);
  Verify("https://carol.example/reply");
  EXPECT_EQ(fetcher_.calls.size(), 4u);
}

// A fetcher that answers the URLs in `parked` only when told to (a tarpit holding its fetch
// until the deadline), and every other URL at once, like ScriptedFetcher.
class ParkingFetcher final : public PageFetcher {
 public:
  fetch::FetchResult Fetch(absl::string_view url, const fetch::FetchLimits& limits) override {
    return scripted.Fetch(url, limits);
  }
  void FetchAsync(absl::string_view url, const fetch::FetchLimits& limits, Callback done) override {
    if (absl::StrContains(url, "tarpit")) {
      absl::MutexLock lock(&mu);
      parked.push_back(std::move(done));
      return;
    }
    std::move(done)(scripted.Fetch(url, limits));
  }
  // Answers every parked fetch with a timeout.
  void TimeOutParked() {
    std::vector<Callback> callbacks;
    {
      absl::MutexLock lock(&mu);
      callbacks.swap(parked);
    }
    for (Callback& callback : callbacks) {
      std::move(callback)(Failure(FetchOutcome::kTimeout));
    }
  }

  ScriptedFetcher scripted;
  absl::Mutex mu;
  std::vector<Callback> parked ABSL_GUARDED_BY(mu);
};

class VerifierSourceVerifierAsyncTest : public ::testing::Test {
 protected:
  VerifierSourceVerifierAsyncTest() {
    verifier_.set_cpu_executor([this](absl::AnyInvocable<void() &&> task) {
      ++cpu_tasks_;
      std::move(task)();
    });
  }

  ParkingFetcher fetcher_;
  ScriptedAnalyzer analyzer_;
  absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  SourceVerifier verifier_{fetcher_, analyzer_, SourceVerifierConfig{}, [this] { return now_; }};
  int cpu_tasks_ = 0;
};

TEST_F(VerifierSourceVerifierAsyncTest, AFastSourceIsVerifiedWhileAThousandTarpitsAreInFlight) {
  int slow_done = 0;
  for (int i = 0; i < 1000; ++i) {
    verifier_.VerifyAsync(absl::StrCat("https://tarpit", i, ".example/reply"),
                          "https://bob.example/post", [&](VerificationOutcome outcome) {
                            EXPECT_EQ(outcome.kind, VerificationOutcome::Kind::kRetry);
                            EXPECT_EQ(outcome.reason, "timeout");
                            ++slow_done;
                          });
  }
  std::optional<VerificationOutcome> fast;
  fetcher_.scripted.pages["https://alice.example/reply"] =
      Page("<a href=https://bob.example/post>", "https://alice.example/reply");
  verifier_.VerifyAsync("https://alice.example/reply", "https://bob.example/post",
                        [&](VerificationOutcome outcome) { fast = std::move(outcome); });
  // Answered with the 1,000 slow ones still waiting, on no thread of their own.
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(fast->kind, VerificationOutcome::Kind::kVerified);
  EXPECT_EQ(slow_done, 0);
  {
    absl::MutexLock lock(&fetcher_.mu);
    EXPECT_EQ(fetcher_.parked.size(), 1000u);
  }
  fetcher_.TimeOutParked();
  EXPECT_EQ(slow_done, 1000);
  EXPECT_EQ(cpu_tasks_, 1001);  // Every page judged on the CPU executor.
}

TEST_F(VerifierSourceVerifierAsyncTest, TheAuthorPageIsFetchedAsynchronouslyAndCached) {
  fetcher_.scripted.pages["https://alice.example/reply"] =
      Page("<a href=https://bob.example/post> author-page:https://alice.example/tarpit-about",
           "https://alice.example/reply");
  std::optional<VerificationOutcome> first;
  verifier_.VerifyAsync("https://alice.example/reply", "https://bob.example/post",
                        [&](VerificationOutcome outcome) { first = std::move(outcome); });
  EXPECT_FALSE(first.has_value());  // Waiting for the author page, holding no thread.
  std::vector<PageFetcher::Callback> parked;
  {
    absl::MutexLock lock(&fetcher_.mu);
    parked.swap(fetcher_.parked);
  }
  ASSERT_EQ(parked.size(), 1u);
  std::move(parked[0])(Page("Alice Author", "https://alice.example/about"));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->kind, VerificationOutcome::Kind::kVerified);
  EXPECT_EQ(first->content.author_name, "Alice Author");
  EXPECT_EQ(cpu_tasks_, 2);

  std::optional<VerificationOutcome> second;  // The cache answers: no second author fetch.
  verifier_.VerifyAsync("https://alice.example/reply", "https://bob.example/post",
                        [&](VerificationOutcome outcome) { second = std::move(outcome); });
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->content.author_name, "Alice Author");
}

TEST_F(VerifierSourceVerifierAsyncTest, AsyncOutcomesMatchTheBlockingPipeline) {
  fetcher_.scripted.pages["https://alice.example/reply"] = Failure(FetchOutcome::kGone);
  std::optional<VerificationOutcome> outcome;
  store::JobRecord job;
  job.source = "https://alice.example/reply";
  job.target = "https://bob.example/post";
  verifier_.VerifyAsync(job, [&](VerificationOutcome result) { outcome = std::move(result); });
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->reason, verifier_.Verify(job).reason);
  EXPECT_EQ(outcome->reason, "source_gone");
}

}  // namespace
}  // namespace portcullis::verifier::verification
