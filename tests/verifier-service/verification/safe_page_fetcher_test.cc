// SafePageFetcher waits for the event-driven SafeFetcher on the calling thread, and never longer
// than the fetch's timeout plus its grace.

#include "verifier-service/src/verification/safe_page_fetcher.h"

#include <memory>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::verification {
namespace {

// Every name is one public address.
class PublicResolver final : public fetch::Resolver {
 public:
  void Resolve(absl::string_view, Callback callback) override {
    std::move(callback)(std::vector<net::IpAddress>{*net::IpAddress::Parse("93.184.216.34")});
  }
};

// Answers from another thread after `delay`; or holds the callback until Release().
class SlowHttpClient final : public fetch::HttpClient {
 public:
  explicit SlowHttpClient(std::optional<absl::Duration> delay) : delay_(delay) {}
  ~SlowHttpClient() override {
    Release();
    for (std::thread& thread : threads_) {
      thread.join();
    }
  }

  void Fetch(fetch::HttpRequest, Callback callback) override {
    if (!delay_.has_value()) {
      absl::MutexLock lock(&mu_);
      held_ = std::move(callback);
      return;
    }
    threads_.emplace_back([delay = *delay_, callback = std::move(callback)]() mutable {
      absl::SleepFor(delay);
      fetch::HttpResponse response;
      response.status = 200;
      response.content_type = "text/html";
      response.body = "<p>hello</p>";
      std::move(callback)(std::move(response));
    });
  }

  void Release() {
    Callback held;
    {
      absl::MutexLock lock(&mu_);
      held = std::move(held_);
      held_ = nullptr;
    }
    if (held) {
      std::move(held)(absl::CancelledError("released"));
    }
  }

 private:
  const std::optional<absl::Duration> delay_;
  absl::Mutex mu_;
  Callback held_;
  std::vector<std::thread> threads_;
};

struct Fixture {
  explicit Fixture(std::optional<absl::Duration> delay) : http(delay) {
    policy = std::make_unique<fetch::EgressPolicy>(*fetch::EgressPolicy::Create({}));
    fetcher = *fetch::SafeFetcher::Create({}, policy.get(), &resolver, &http);
  }
  PublicResolver resolver;
  SlowHttpClient http;
  std::unique_ptr<fetch::EgressPolicy> policy;
  std::unique_ptr<fetch::SafeFetcher> fetcher;
};

TEST(VerifierSafePageFetcherTest, WaitsForTheFetchOnTheCallingThread) {
  Fixture fixture(absl::Milliseconds(50));
  SafePageFetcher pages(*fixture.fetcher);
  const fetch::FetchResult result =
      pages.Fetch("https://alice.example/reply", {3, absl::Seconds(5), 1 << 20});
  EXPECT_EQ(result.outcome, fetch::FetchOutcome::kOk);
  EXPECT_EQ(result.body, "<p>hello</p>");
  EXPECT_EQ(result.final_url, "https://alice.example/reply");
}

TEST(VerifierSafePageFetcherTest, RefusedUrlsAreAnsweredWithoutWaiting) {
  Fixture fixture(absl::Milliseconds(50));
  SafePageFetcher pages(*fixture.fetcher);
  const absl::Time start = absl::Now();
  const fetch::FetchResult result =
      pages.Fetch("http://127.0.0.1/admin", {3, absl::Seconds(5), 1 << 20});
  EXPECT_EQ(result.outcome, fetch::FetchOutcome::kForbiddenAddress);
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

TEST(VerifierSafePageFetcherTest, AFetcherThatNeverAnswersIsATimeoutAfterTheGrace) {
  Fixture fixture(std::nullopt);
  SafePageFetcher pages(*fixture.fetcher, absl::Milliseconds(100));
  const absl::Time start = absl::Now();
  const fetch::FetchResult result =
      pages.Fetch("https://alice.example/reply", {3, absl::Milliseconds(200), 1 << 20});
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(result.outcome, fetch::FetchOutcome::kTimeout);
  EXPECT_GE(took, absl::Milliseconds(290));
  EXPECT_LT(took, absl::Seconds(3));
  fixture.http.Release();  // The late answer is dropped without harm.
}

}  // namespace
}  // namespace portcullis::verifier::verification
