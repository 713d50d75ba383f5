// The gateway's /metrics, checked by Prometheus' own parser (promtool).
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fixture.h"
#include "tests/support/temp_path.h"

namespace portcullis::integration {
namespace {

using MetricsTest = StackTest;

TEST_F(MetricsTest, MetricsArePrometheusTextAndCountRequests) {
  ASSERT_TRUE(stack_->ServeTarget("https://b.example/").ok());
  ASSERT_EQ(stack_->PostWebmention("https://a.example/1", "https://b.example/").status, 202);
  ASSERT_EQ(stack_->PostWebmention("ftp://a.example/1", "https://b.example/").status, 400);

  const testing::HttpResult metrics =
      testing::SendHttp(stack_->admin_port(), "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.Header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(metrics.body.find("portcullis_gateway_http_requests_total{"), std::string::npos);
  EXPECT_NE(metrics.body.find("status=\"202\""), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("status=\"400\""), std::string::npos) << metrics.body;
  EXPECT_NE(metrics.body.find("portcullis_gateway_http_request_duration_seconds_bucket"),
            std::string::npos);
  // The main port does not serve metrics.
  EXPECT_NE(stack_->Get("/metrics").status, 200);

  const char* promtool = std::getenv("PORTCULLIS_PROMTOOL");
  if (promtool == nullptr || *promtool == '\0') {
    if (testing::RunningInCi()) {
      FAIL() << "CI=true but PORTCULLIS_PROMTOOL is not set (scripts/test sets it)";
    }
    GTEST_SKIP() << "SKIPPED promtool check: PORTCULLIS_PROMTOOL not set (run scripts/test)";
  }
  const std::string path = portcullis::testing::PrivateTempPath("metrics.txt");
  std::ofstream(path) << metrics.body;
  const std::string command =
      absl::StrCat(promtool, " check metrics < ", path, " > ", path, ".out 2>&1");
  const int exit_status = std::system(command.c_str());
  std::ifstream report(absl::StrCat(path, ".out"));
  const std::string report_text((std::istreambuf_iterator<char>(report)), {});
  // promtool exits 1 for format errors and 3 for lint problems only; both fail here.
  EXPECT_EQ(exit_status, 0) << report_text;
}

}  // namespace
}  // namespace portcullis::integration
