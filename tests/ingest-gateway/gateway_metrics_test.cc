#include "ingest-gateway/src/gateway_metrics.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/metrics/text_exposition.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

TEST(GatewayMetricsTest, IngestCountsByActionAndWebmentionByDecision) {
  prometheus::Registry registry;
  GatewayMetrics metrics(registry);
  const auto finish = [&metrics](absl::string_view route, int status,
                                 std::optional<absl::string_view> action) {
    http::HttpResponse response;
    response.status = status;
    if (action.has_value()) {
      response.headers.Set(kIngestActionHeader, *action);
    }
    metrics.OnRequestStarted(route);
    metrics.OnResponse(route, response, absl::Milliseconds(1));
  };
  // A drop and a duplicate both answer 200: the action tells them apart.
  finish("/ingest", 200, "drop");
  finish("/ingest", 200, "drop");
  finish("/ingest", 200, "duplicate");
  finish("/ingest", 202, "accept");
  finish("/ingest", 202, "quarantine");
  finish("/ingest", 503, "retry");
  finish("/ingest", 422, std::nullopt);
  finish("/ingest", 200, "something-else");  // Bounded: never a label value of its own.
  finish("/webmention", 202, std::nullopt);
  finish("/webmention", 400, std::nullopt);
  finish("/webmention", 429, std::nullopt);
  finish("/webmention", 503, std::nullopt);
  finish("/mentions", 200, std::nullopt);

  const std::string text = metrics::RenderText(registry);
  const auto has = [&text](absl::string_view labels, int count) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("portcullis_gateway_http_requests_total{", labels,
                                             "} ", count)))
        << labels;
  };
  has(R"(action="drop",route="/ingest",status="200")", 2);
  has(R"(action="duplicate",route="/ingest",status="200")", 1);
  has(R"(action="accept",route="/ingest",status="202")", 1);
  has(R"(action="quarantine",route="/ingest",status="202")", 1);
  has(R"(action="retry",route="/ingest",status="503")", 1);
  has(R"(action="none",route="/ingest",status="422")", 1);
  has(R"(action="none",route="/ingest",status="200")", 1);
  has(R"(decision="accepted",route="/webmention",status="202")", 1);
  has(R"(decision="refused_4xx",route="/webmention",status="400")", 1);
  has(R"(decision="rate_limited",route="/webmention",status="429")", 1);
  has(R"(decision="refused_5xx",route="/webmention",status="503")", 1);
  has(R"(route="/mentions",status="200")", 1);
  EXPECT_THAT(text, Not(HasSubstr("something-else")));
  EXPECT_THAT(text, HasSubstr("portcullis_gateway_http_requests_in_flight 0"));
}

}  // namespace
}  // namespace portcullis::gateway
