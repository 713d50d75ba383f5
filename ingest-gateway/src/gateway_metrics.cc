#include "ingest-gateway/src/gateway_metrics.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ingest-gateway/src/ingest_handler.h"
#include "ingest-gateway/src/webmention_handlers.h"

namespace portcullis::gateway {
namespace {

const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return *buckets;
}

}  // namespace

absl::string_view WebmentionDecision(int status) {
  if (status == 202) {
    return "accepted";
  }
  if (status == 429) {
    return "rate_limited";
  }
  return status >= 500 ? "refused_5xx" : "refused_4xx";
}

absl::string_view IngestActionLabel(std::optional<absl::string_view> x_ingest_action) {
  for (absl::string_view action : {"accept", "drop", "duplicate", "quarantine", "retry"}) {
    if (x_ingest_action == action) {
      return action;
    }
  }
  return "none";
}

GatewayMetrics::GatewayMetrics(prometheus::Registry& registry)
    : requests_total_(prometheus::BuildCounter()
                          .Name("portcullis_gateway_http_requests_total")
                          .Help("HTTP requests answered, by route pattern and status code.")
                          .Register(registry)),
      request_duration_(prometheus::BuildHistogram()
                            .Name("portcullis_gateway_http_request_duration_seconds")
                            .Help("Time from a routed request to its response, by route pattern.")
                            .Register(registry)),
      in_flight_(prometheus::BuildGauge()
                     .Name("portcullis_gateway_http_requests_in_flight")
                     .Help("HTTP requests being handled.")
                     .Register(registry)
                     .Add({})),
      connections_rejected_(prometheus::BuildCounter()
                                .Name("portcullis_gateway_http_connections_rejected_total")
                                .Help("Connections refused for being over the connection limit.")
                                .Register(registry)
                                .Add({})),
      connections_rejected_per_address_(
          prometheus::BuildCounter()
              .Name("portcullis_gateway_http_connections_rejected_per_address_total")
              .Help("Connections refused (429) for being over the per-client-address limit.")
              .Register(registry)
              .Add({})),
      protocol_errors_(prometheus::BuildCounter()
                           .Name("portcullis_gateway_http_protocol_errors_total")
                           .Help("Requests refused by the HTTP server itself (malformed, body "
                                 "or header too large), by status code.")
                           .Register(registry)),
      ready_(prometheus::BuildGauge()
                 .Name("portcullis_gateway_ready")
                 .Help("1 while the gateway is ready (verifier serving, not draining).")
                 .Register(registry)
                 .Add({})) {}

void GatewayMetrics::OnRequestStarted(absl::string_view /*route*/) { in_flight_.Increment(); }

void GatewayMetrics::OnProtocolError(int status) {
  protocol_errors_.Add({{"status", absl::StrCat(status)}}).Increment();
}

void GatewayMetrics::OnRequestFinished(absl::string_view route, int status,
                                       absl::Duration elapsed) {
  Finished(route, status, {}, elapsed);
}

void GatewayMetrics::OnResponse(absl::string_view route, const http::HttpResponse& response,
                                absl::Duration elapsed) {
  prometheus::Labels extra;
  if (route == kIngestPath) {
    extra.emplace("action", IngestActionLabel(response.headers.Get(kIngestActionHeader)));
  } else if (route == kWebmentionPath) {
    extra.emplace("decision", WebmentionDecision(response.status));
  }
  Finished(route, response.status, std::move(extra), elapsed);
}

void GatewayMetrics::Finished(absl::string_view route, int status, prometheus::Labels extra,
                              absl::Duration elapsed) {
  in_flight_.Decrement();
  const std::string route_label(route);
  extra.emplace("route", route_label);
  extra.emplace("status", absl::StrCat(status));
  requests_total_.Add(extra).Increment();
  request_duration_.Add({{"route", route_label}}, DurationBuckets())
      .Observe(absl::ToDoubleSeconds(elapsed));
}

}  // namespace portcullis::gateway
