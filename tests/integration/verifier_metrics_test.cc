// The verifier's /metrics on --admin_listen, through the real binaries: the HPA's metrics (queue
// depth, verifications in flight) and the per-RPC counter, valid for Prometheus' own parser.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/integration/metrics_support.h"

namespace portcullis::integration {
namespace {

using ::testing::HasSubstr;

class StackVerifierMetricsTest : public StackTest {
 protected:
  StackVerifierMetricsTest() { start_stack_ = false; }

  std::string Scrape() const {
    return testing::SendHttp(verifier_admin_port_, "GET", "/metrics").body;
  }

  const int verifier_admin_port_ = testing::FreeLoopbackPort();
};

TEST_F(StackVerifierMetricsTest, QueueDepthInFlightAndRpcsAreServedForTheHpa) {
  // --workers=0: nothing verifies, so every accepted mention stays in the queue.
  ASSERT_TRUE(stack_
                  ->StartVerifier({absl::StrCat("--admin_listen=127.0.0.1:", verifier_admin_port_),
                                   "--workers=0"})
                  .ok());
  ASSERT_TRUE(stack_->StartGateway().ok());
  ASSERT_TRUE(stack_->WaitForReadyz(200, absl::Seconds(30)).ok());
  ASSERT_TRUE(stack_->ServeTarget("https://b.example/*").ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(
        stack_->PostWebmention(absl::StrCat("https://a.example/", i), "https://b.example/x").status,
        202);
  }
  // The depth is sampled every 5 s (verifier_metrics.h), not per scrape: wait for a sample.
  std::string scrape;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    scrape = Scrape();
    if (SumSamples(scrape, "portcullis_verifier_queue_depth") == 3) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_EQ(SumSamples(scrape, "portcullis_verifier_queue_depth"), 3) << scrape;
  EXPECT_THAT(scrape, HasSubstr("\nportcullis_verifier_verifications_in_flight 0\n"));
  // The gateway submits through the batch call (issue 21); one at a time, each call holds one.
  EXPECT_EQ(
      SumSamples(scrape, "portcullis_verifier_grpc_requests_total",
                 {"method=\"/portcullis.verifier.v1.Verifier/SubmitMentions\"", "code=\"OK\""}),
      3)
      << scrape;
  EXPECT_EQ(SumSamples(scrape, "portcullis_verifier_grpc_requests_total",
                       {"method=\"/portcullis.verifier.v1.Verifier/AddSite\""}),
            1);

  bool skipped = false;
  const std::string report = PromtoolCheck(scrape, &skipped);
  EXPECT_EQ(report, "");
  if (skipped) {
    if (testing::RunningInCi()) {
      FAIL() << "CI=true but PORTCULLIS_PROMTOOL is not set (scripts/test sets it)";
    }
    GTEST_SKIP() << "SKIPPED promtool check: PORTCULLIS_PROMTOOL not set (run scripts/test)";
  }
}

}  // namespace
}  // namespace portcullis::integration
