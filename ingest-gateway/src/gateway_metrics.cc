#include "ingest-gateway/src/gateway_metrics.h"

#include <atomic>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
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

std::atomic<uint64_t> next_instance{1};

// One label set of the per-request metrics, as looked up (views) and as stored (strings).
struct CellKeyView {
  uint64_t instance;
  absl::string_view route;
  int status;
  absl::string_view extra_name;
  absl::string_view extra_value;
  auto Tuple() const { return std::make_tuple(instance, route, status, extra_name, extra_value); }
};
struct CellKey {
  uint64_t instance;
  std::string route;
  int status;
  std::string extra_name;
  std::string extra_value;
  CellKeyView View() const { return {instance, route, status, extra_name, extra_value}; }
};
struct CellKeyHash {
  using is_transparent = void;
  size_t operator()(const CellKeyView& key) const {
    return absl::HashOf(key.instance, key.route, key.status, key.extra_name, key.extra_value);
  }
  size_t operator()(const CellKey& key) const { return (*this)(key.View()); }
};
struct CellKeyEq {
  using is_transparent = void;
  static CellKeyView View(const CellKeyView& key) { return key; }
  static CellKeyView View(const CellKey& key) { return key.View(); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return View(a).Tuple() == View(b).Tuple();
  }
};

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
    : instance_(next_instance.fetch_add(1)),
      requests_total_(prometheus::BuildCounter()
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
  Finished(route, status, {}, {}, elapsed);
}

void GatewayMetrics::OnResponse(absl::string_view route, const http::HttpResponse& response,
                                absl::Duration elapsed) {
  if (route == kIngestPath) {
    Finished(route, response.status, "action",
             IngestActionLabel(response.headers.Get(kIngestActionHeader)), elapsed);
  } else if (route == kWebmentionPath) {
    Finished(route, response.status, "decision", WebmentionDecision(response.status), elapsed);
  } else {
    Finished(route, response.status, {}, {}, elapsed);
  }
}

void GatewayMetrics::Finished(absl::string_view route, int status, absl::string_view extra_name,
                              absl::string_view extra_value, absl::Duration elapsed) {
  in_flight_.Decrement();
  const Cells cells = CellsFor(route, status, extra_name, extra_value);
  cells.requests->Increment();
  cells.duration->Observe(absl::ToDoubleSeconds(elapsed));
}

GatewayMetrics::Cells GatewayMetrics::CellsFor(absl::string_view route, int status,
                                               absl::string_view extra_name,
                                               absl::string_view extra_value) {
  // Bounded: routes are patterns and the other labels come from small fixed sets.
  thread_local absl::flat_hash_map<CellKey, Cells, CellKeyHash, CellKeyEq> cache;
  const CellKeyView key{instance_, route, status, extra_name, extra_value};
  if (const auto found = cache.find(key); found != cache.end()) {
    return found->second;
  }
  const std::string route_label(route);
  prometheus::Labels labels{{"route", route_label}, {"status", absl::StrCat(status)}};
  if (!extra_name.empty()) {
    labels.emplace(std::string(extra_name), std::string(extra_value));
  }
  const Cells cells{&requests_total_.Add(labels),
                    &request_duration_.Add({{"route", route_label}}, DurationBuckets())};
  cache.emplace(
      CellKey{instance_, route_label, status, std::string(extra_name), std::string(extra_value)},
      cells);
  return cells;
}

}  // namespace portcullis::gateway
