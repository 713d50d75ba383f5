#include "ingest-gateway/src/gateway_metrics.h"

#include "common/metrics/text_exposition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;

TEST(GatewayMetricsTest, RendersEveryMetricWithRouteLabels) {
  prometheus::Registry registry;
  GatewayMetrics metrics(registry);
  metrics.OnRequestStarted("/webmention/status/{id}");
  metrics.OnRequestFinished("/webmention/status/{id}", 404, absl::Milliseconds(3));
  metrics.OnRequestStarted("/webmention");
  metrics.OnConnectionRejected();
  metrics.OnConnectionRejectedPerAddress();
  metrics.OnConnectionRejectedPerAddress();
  metrics.SetReady(true);
  metrics.OnProtocolError(413);

  const std::string text = metrics::RenderText(registry);
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(portcullis_gateway_http_requests_total{route="/webmention/status/{id}",status="404"} 1)"));
  EXPECT_THAT(
      text,
      HasSubstr(
          R"(portcullis_gateway_http_request_duration_seconds_count{route="/webmention/status/{id}"} 1)"));
  EXPECT_THAT(text, HasSubstr("portcullis_gateway_http_requests_in_flight 1"));
  EXPECT_THAT(text, HasSubstr("portcullis_gateway_http_connections_rejected_total 1"));
  EXPECT_THAT(text,
              HasSubstr("portcullis_gateway_http_connections_rejected_per_address_total 2"));
  EXPECT_THAT(text, HasSubstr("portcullis_gateway_ready 1"));
  EXPECT_THAT(text, HasSubstr(R"(portcullis_gateway_http_protocol_errors_total{status="413"} 1)"));
}

}  // namespace
}  // namespace portcullis::gateway
