// The scaling metrics as a scrape reads them: in-flight verifications and the sampled queue depth.
#include "verifier-service/src/server/verifier_metrics.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/metrics/text_exposition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

using ::testing::HasSubstr;

// Verifies nothing until released.
class BlockingVerifier final : public queue::MentionVerifier {
 public:
  queue::VerificationOutcome Verify(const store::JobRecord&) override {
    entered_.fetch_add(1);
    release_.WaitForNotification();
    return queue::VerificationOutcome::Verified();
  }
  int entered() const { return entered_.load(); }
  void Release() { release_.Notify(); }

 private:
  std::atomic<int> entered_{0};
  absl::Notification release_;
};

// The value of the unlabelled metric `name` in a scrape; -1 when absent.
double Value(const prometheus::Registry& registry, const std::string& name) {
  const std::string text = metrics::RenderText(registry);
  const std::string prefix = absl::StrCat("\n", name, " ");
  const size_t at = text.find(prefix);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + prefix.size()));
}

// Polls the scrape until it contains `line` (bounded).
bool ScrapeShows(const prometheus::Registry& registry, const std::string& line) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (metrics::RenderText(registry).find(line) != std::string::npos) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

TEST(VerifierMetricsTest, InFlightCountsVerificationsWhileTheyRun) {
  prometheus::Registry registry;
  BlockingVerifier inner;
  InFlightVerifier verifier(&inner, registry);
  EXPECT_THAT(metrics::RenderText(registry),
              HasSubstr("portcullis_verifier_verifications_in_flight 0\n"));
  std::thread a([&] { verifier.Verify({}); });
  std::thread b([&] { verifier.Verify({}); });
  EXPECT_TRUE(ScrapeShows(registry, "portcullis_verifier_verifications_in_flight 2\n"))
      << metrics::RenderText(registry);
  inner.Release();
  a.join();
  b.join();
  EXPECT_THAT(metrics::RenderText(registry),
              HasSubstr("portcullis_verifier_verifications_in_flight 0\n"));
}

TEST(VerifierMetricsTest, InFlightIsRegisteredWithoutAVerifier) {
  prometheus::Registry registry;
  InFlightVerifier verifier(nullptr, registry);  // --workers=0: never called.
  EXPECT_THAT(metrics::RenderText(registry),
              HasSubstr("# TYPE portcullis_verifier_verifications_in_flight gauge"));
}

TEST(VerifierMetricsTest, QueueDepthIsSampledAtOnceThenPeriodically) {
  prometheus::Registry registry;
  std::atomic<int64_t> depth{7};
  std::atomic<int> samples{0};
  QueueDepthSampler sampler(
      [&]() -> absl::StatusOr<int64_t> {
        samples.fetch_add(1);
        return depth.load();
      },
      absl::Milliseconds(20), registry);
  EXPECT_THAT(metrics::RenderText(registry), HasSubstr("portcullis_verifier_queue_depth 0\n"));
  sampler.Start();
  EXPECT_TRUE(ScrapeShows(registry, "portcullis_verifier_queue_depth 7\n"));
  depth = 12;
  EXPECT_TRUE(ScrapeShows(registry, "portcullis_verifier_queue_depth 12\n"));
  sampler.Stop();
  const int after_stop = samples.load();
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(samples.load(), after_stop) << "sampled after Stop()";
  sampler.Stop();  // Idempotent.
}

TEST(VerifierMetricsTest, AFailedSampleKeepsTheLastDepthAndIsCounted) {
  prometheus::Registry registry;
  std::atomic<bool> fail{false};
  QueueDepthSampler sampler(
      [&]() -> absl::StatusOr<int64_t> {
        if (fail.load()) {
          return absl::UnavailableError("database down");
        }
        return 3;
      },
      absl::Milliseconds(10), registry);
  sampler.Start();
  ASSERT_TRUE(ScrapeShows(registry, "portcullis_verifier_queue_depth 3\n"));
  fail = true;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Value(registry, "portcullis_verifier_queue_depth_sample_errors_total") < 2 &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_GE(Value(registry, "portcullis_verifier_queue_depth_sample_errors_total"), 2)
      << metrics::RenderText(registry);
  EXPECT_THAT(metrics::RenderText(registry), HasSubstr("portcullis_verifier_queue_depth 3\n"));
}

}  // namespace
}  // namespace portcullis::verifier::server
