#pragma once

// FetchMetrics: every metric of the SSRF-guarded fetcher, fed by SafeFetcher as its
// FetchObserver. Names portcullis_verifier_fetch_*; labels are bounded (outcome names, policy
// block names, stages), never hosts or URLs.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "verifier-service/src/fetch/fetch_observer.h"

namespace portcullis::verifier::fetch {

class FetchMetrics final : public FetchObserver {
 public:
  // Registers the metrics in `registry`, which must outlive this object.
  explicit FetchMetrics(prometheus::Registry& registry);

  void OnFetchStarted() override;
  void OnFetchFinished(const FetchResult& result, absl::Duration elapsed) override;
  void OnLookup(const absl::Status& status, absl::Duration elapsed) override;
  void OnRefused(absl::string_view stage, absl::string_view reason) override;
  void OnQueued(absl::string_view limit) override;
  void OnDequeued(absl::string_view limit, absl::Duration waited) override;

 private:
  prometheus::Family<prometheus::Counter>& fetches_total_;
  prometheus::Family<prometheus::Histogram>& fetch_duration_;
  prometheus::Counter& body_bytes_total_;
  prometheus::Gauge& in_flight_;
  prometheus::Family<prometheus::Histogram>& dns_duration_;
  prometheus::Family<prometheus::Counter>& refusals_total_;
  prometheus::Family<prometheus::Gauge>& queued_;
  prometheus::Family<prometheus::Histogram>& queue_wait_;
};

}  // namespace portcullis::verifier::fetch
