// DeliveryWorker over an in-memory DeliveryStore and the real SafeFetcher with a recording HTTP
// client (no sockets): what a receiver gets, and what each answer makes of the delivery.
#include "verifier-service/src/delivery/delivery_worker.h"

#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "tests/verifier-service/store/null_delivery_store.h"
#include "verifier-service/src/delivery/delivery_policy.h"
#include "verifier-service/src/fetch/egress_policy.h"
#include "verifier-service/src/fetch/ssrf_conformance.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::verifier::delivery {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

// Hands out what `due` holds, records every attempt.
class FakeDeliveryStore final : public store::testing::NullDeliveryStore {
 public:
  void Add(store::ClaimedDelivery delivery) {
    absl::MutexLock lock(&mu_);
    due_.push_back(std::move(delivery));
  }
  std::vector<store::AttemptRecord> WaitForAttempts(size_t count) {
    absl::MutexLock lock(&mu_);
    const auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return attempts_.size() >= count;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return attempts_;
  }

  absl::StatusOr<std::vector<store::ClaimedDelivery>> Claim(const std::string& owner, int limit,
                                                            absl::Duration) override {
    absl::MutexLock lock(&mu_);
    owners_.push_back(owner);
    std::vector<store::ClaimedDelivery> claimed;
    while (!due_.empty() && static_cast<int>(claimed.size()) < limit) {
      claimed.push_back(std::move(due_.front()));
      due_.erase(due_.begin());
    }
    return claimed;
  }
  absl::StatusOr<int> RecordAttempts(const std::string& owner,
                                     absl::Span<const store::AttemptRecord> attempts) override {
    absl::MutexLock lock(&mu_);
    for (const store::AttemptRecord& attempt : attempts) {
      attempts_.push_back(attempt);
      recorded_by_.push_back(owner);
    }
    return static_cast<int>(attempts.size());
  }
  absl::StatusOr<store::DeliveryQueueStats> QueueStats(int64_t) override {
    absl::MutexLock lock(&mu_);
    return store::DeliveryQueueStats{static_cast<int64_t>(due_.size()), absl::Seconds(3)};
  }
  std::vector<std::string> recorded_by() {
    absl::MutexLock lock(&mu_);
    return recorded_by_;
  }

 private:
  absl::Mutex mu_;
  std::vector<store::ClaimedDelivery> due_ ABSL_GUARDED_BY(mu_);
  std::vector<store::AttemptRecord> attempts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> owners_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> recorded_by_ ABSL_GUARDED_BY(mu_);
};

store::ClaimedDelivery Delivery(const std::string& id, const std::string& url, int attempts = 1) {
  store::ClaimedDelivery delivery;
  delivery.id = id;
  delivery.webhook_id = "msg_" + id;
  delivery.event_type = "mention.verified";
  delivery.body = R"({"type":"mention.verified","timestamp":"2026-12-02T10:00:00.000Z","data":{}})";
  delivery.attempts = attempts;
  delivery.subscription_id = "sub-1";
  delivery.url = url;
  delivery.signature_version = "v1";
  delivery.signing_key = ingest::ParseVerificationKey("k", kSecret)->material;
  return delivery;
}

class VerifierDeliveryWorkerTest : public ::testing::Test {
 protected:
  VerifierDeliveryWorkerTest()
      : resolver_(
            [](absl::string_view) -> absl::StatusOr<std::vector<net::IpAddress>> {
              return std::vector<net::IpAddress>{*net::IpAddress::Parse("93.184.216.34")};
            },
            &events_),
        http_(
            [this](const fetch::HttpRequest& request) -> absl::StatusOr<fetch::HttpResponse> {
              absl::MutexLock lock(&mu_);
              requests_.push_back(request);
              const auto it = answers_.find(request.url.path());
              if (it == answers_.end()) {
                return absl::UnavailableError("connection refused");
              }
              return it->second;
            },
            &events_) {
    fetch::SafeFetcherConfig config;
    config.max_redirects = 0;
    fetcher_ = *fetch::SafeFetcher::Create(config, &policy_, &resolver_, &http_);
  }

  void Answer(const std::string& path, int status,
              std::optional<std::string> retry_after = std::nullopt) {
    fetch::HttpResponse response;
    response.status = status;
    response.retry_after = std::move(retry_after);
    response.body_skipped = true;
    answers_[path] = response;
  }

  std::unique_ptr<DeliveryWorker> StartWorker() {
    DeliveryWorkerOptions options;
    options.owner = "pod-1/deliveries";
    options.threads = 2;
    options.poll_interval = absl::Milliseconds(10);
    options.stats_interval = absl::Milliseconds(10);
    auto worker = std::make_unique<DeliveryWorker>(store_, *fetcher_, registry_, options);
    worker->Start();
    return worker;
  }

  std::vector<fetch::HttpRequest> Requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

  double Metric(const std::string& name, const std::map<std::string, std::string>& labels) {
    for (const prometheus::MetricFamily& family : registry_.Collect()) {
      if (family.name != name) {
        continue;
      }
      for (const prometheus::ClientMetric& metric : family.metric) {
        std::map<std::string, std::string> have;
        for (const prometheus::ClientMetric::Label& label : metric.label) {
          have[label.name] = label.value;
        }
        if (have == labels) {
          return family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                                : metric.gauge.value;
        }
      }
    }
    return -1;
  }

  fetch::EgressPolicy policy_;
  std::vector<fetch::FetchEvent> events_;
  fetch::ScriptedResolver resolver_;
  fetch::RecordingHttpClient http_;
  std::unique_ptr<fetch::SafeFetcher> fetcher_;
  absl::Mutex mu_;
  std::vector<fetch::HttpRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, fetch::HttpResponse> answers_;
  FakeDeliveryStore store_;
  prometheus::Registry registry_;
};

TEST_F(VerifierDeliveryWorkerTest, PostsTheSignedBodyAndRecordsADelivery) {
  Answer("/ok", 204);
  store_.Add(Delivery("1", "http://hooks.example/ok"));
  std::unique_ptr<DeliveryWorker> worker = StartWorker();
  const std::vector<store::AttemptRecord> attempts = store_.WaitForAttempts(1);
  worker->Stop();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].state, "delivered");
  EXPECT_EQ(attempts[0].status_code, 204);
  EXPECT_EQ(attempts[0].delivery_id, "1");
  EXPECT_FALSE(attempts[0].disable_reason.has_value());
  EXPECT_EQ(store_.recorded_by(), std::vector<std::string>{"pod-1/deliveries"});
  const std::vector<fetch::HttpRequest> requests = Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].post_body, Delivery("1", "").body);
  std::map<std::string, std::string> headers(requests[0].headers.begin(),
                                             requests[0].headers.end());
  EXPECT_EQ(headers["Content-Type"], "application/json");
  EXPECT_EQ(headers["webhook-id"], "msg_1");
  const absl::StatusOr<ingest::VerificationKey> key = ingest::ParseVerificationKey("k", kSecret);
  EXPECT_TRUE(ingest::VerifyDelivery({headers["webhook-id"], headers["webhook-timestamp"],
                                      headers["webhook-signature"], requests[0].post_body},
                                     {*key}, absl::Now())
                  .ok());
  EXPECT_EQ(Metric("portcullis_verifier_delivery_attempts_total",
                   {{"event", "mention.verified"}, {"result", "delivered"}}),
            1);
}

TEST_F(VerifierDeliveryWorkerTest, EachAnswerDecidesTheNextStep) {
  Answer("/busy", 503, "2");
  Answer("/gone", 410);
  Answer("/bad", 400);
  store_.Add(Delivery("busy", "http://hooks.example/busy"));
  store_.Add(Delivery("gone", "http://hooks.example/gone"));
  store_.Add(Delivery("bad", "http://hooks.example/bad", kMaxAttempts));
  store_.Add(Delivery("refused", "http://hooks.example/nobody"));
  store_.Add(Delivery("private", "http://10.0.0.7/hook"));
  const absl::Time started = absl::Now();
  std::unique_ptr<DeliveryWorker> worker = StartWorker();
  const std::vector<store::AttemptRecord> attempts = store_.WaitForAttempts(5);
  worker->Stop();
  ASSERT_EQ(attempts.size(), 5u);
  std::map<std::string, store::AttemptRecord> by_id;
  for (const store::AttemptRecord& attempt : attempts) {
    by_id[attempt.delivery_id] = attempt;
  }
  EXPECT_EQ(by_id["busy"].state, "pending");
  EXPECT_EQ(by_id["busy"].status_code, 503);
  EXPECT_GE(by_id["busy"].next_attempt_at, started + absl::Seconds(2));
  EXPECT_LE(by_id["busy"].next_attempt_at, absl::Now() + absl::Seconds(2));
  EXPECT_EQ(by_id["gone"].state, "failed");
  ASSERT_TRUE(by_id["gone"].disable_reason.has_value());
  EXPECT_EQ(by_id["bad"].state, "failed");  // its last attempt
  EXPECT_FALSE(by_id["bad"].disable_reason.has_value());
  EXPECT_EQ(by_id["refused"].state, "pending");
  EXPECT_EQ(by_id["refused"].status_code, 0);
  EXPECT_NE(by_id["refused"].error.find("connection_failed"), std::string::npos);
  EXPECT_EQ(by_id["private"].state, "pending");
  EXPECT_NE(by_id["private"].error.find("forbidden_address"), std::string::npos);
  for (const fetch::HttpRequest& request : Requests()) {
    EXPECT_NE(request.url.host(), "10.0.0.7") << "a private destination was contacted";
  }
  EXPECT_EQ(Metric("portcullis_verifier_delivery_attempts_total",
                   {{"event", "mention.verified"}, {"result", "forbidden"}}),
            1);
  EXPECT_EQ(Metric("portcullis_verifier_delivery_oldest_undelivered_age_seconds", {}), 3);
}

}  // namespace
}  // namespace portcullis::verifier::delivery
