#pragma once

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ingest-gateway/src/http/router.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace portcullis::gateway {

// Every metric of the gateway. Labels are route patterns, never raw paths, and bounded values:
// portcullis_gateway_http_requests_total{route,status} carries, on POST /ingest, `action` (the
// X-Ingest-Action: accept, drop, duplicate, quarantine, retry; "none" for the errors that have
// none) and, on POST /webmention, `decision` (WebmentionDecision) — both answer 200 or 202, so
// the status alone does not tell a drop from a duplicate.
// POST /webmention's decision label: "accepted" (202), "rate_limited" (429: ours or the
// verifier's), "refused_4xx" (the sender's request: a form error or the verifier's rejection) or
// "refused_5xx" (ours: the verifier unavailable, an internal error).
absl::string_view WebmentionDecision(int status);

// POST /ingest's action label: `x_ingest_action` when it is one of the five actions, else "none".
absl::string_view IngestActionLabel(std::optional<absl::string_view> x_ingest_action);

class GatewayMetrics final : public http::RouteObserver {
 public:
  // Registers the metrics in `registry`, which must outlive this object.
  explicit GatewayMetrics(prometheus::Registry& registry);

  void OnRequestStarted(absl::string_view route) override;
  void OnRequestFinished(absl::string_view route, int status, absl::Duration elapsed) override;
  void OnResponse(absl::string_view route, const http::HttpResponse& response,
                  absl::Duration elapsed) override;

  // A connection refused for being over --max_connections.
  void OnConnectionRejected() { connections_rejected_.Increment(); }
  // A connection refused for being over --max_connections_per_address.
  void OnConnectionRejectedPerAddress() { connections_rejected_per_address_.Increment(); }

  // A request the HTTP server answered itself (malformed, too large) with `status`.
  void OnProtocolError(int status);

  // 1 while /readyz answers 200.
  void SetReady(bool ready) { ready_.Set(ready ? 1 : 0); }

 private:
  // The counter and histogram of one label set.
  struct Cells {
    prometheus::Counter* requests;
    prometheus::Histogram* duration;
  };

  // `extra_name`="`extra_value`" is a third label of requests_total_ when extra_name is not empty.
  void Finished(absl::string_view route, int status, absl::string_view extra_name,
                absl::string_view extra_value, absl::Duration elapsed);
  // The cells of one label set from this thread's cache; prometheus' families (a mutex each and a
  // label map built per lookup) only on this thread's first response with that label set.
  Cells CellsFor(absl::string_view route, int status, absl::string_view extra_name,
                 absl::string_view extra_value);

  // Tells this object's entries in the per-thread caches from those of an earlier one.
  const uint64_t instance_;

  prometheus::Family<prometheus::Counter>& requests_total_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Gauge& in_flight_;
  prometheus::Counter& connections_rejected_;
  prometheus::Counter& connections_rejected_per_address_;
  prometheus::Family<prometheus::Counter>& protocol_errors_;
  prometheus::Gauge& ready_;
};

}  // namespace portcullis::gateway
