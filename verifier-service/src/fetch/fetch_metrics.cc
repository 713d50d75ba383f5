#include "verifier-service/src/fetch/fetch_metrics.h"

#include <string>

#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::fetch {
namespace {

const prometheus::Histogram::BucketBoundaries& SecondsBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return *buckets;
}

std::string LookupResult(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return "ok";
    case absl::StatusCode::kNotFound:
      return "not_found";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    case absl::StatusCode::kCancelled:
      return "cancelled";
    default:
      return "error";
  }
}

}  // namespace

FetchMetrics::FetchMetrics(prometheus::Registry& registry)
    : fetches_total_(
          prometheus::BuildCounter()
              .Name("portcullis_verifier_fetch_fetches_total")
              .Help("Fetches answered, by outcome (ok, forbidden_address, timeout, ...).")
              .Register(registry)),
      fetch_duration_(prometheus::BuildHistogram()
                          .Name("portcullis_verifier_fetch_duration_seconds")
                          .Help("Time from a fetch accepted to its answer, queueing included, by "
                                "outcome.")
                          .Register(registry)),
      body_bytes_total_(prometheus::BuildCounter()
                            .Name("portcullis_verifier_fetch_body_bytes_total")
                            .Help("Decoded body bytes returned by successful fetches.")
                            .Register(registry)
                            .Add({})),
      in_flight_(prometheus::BuildGauge()
                     .Name("portcullis_verifier_fetch_in_flight")
                     .Help("Fetches accepted and not yet answered (queued or running).")
                     .Register(registry)
                     .Add({})),
      dns_duration_(prometheus::BuildHistogram()
                        .Name("portcullis_verifier_fetch_dns_lookup_duration_seconds")
                        .Help("DNS lookups of fetch hops, by result (ok, not_found, unavailable).")
                        .Register(registry)),
      refusals_total_(prometheus::BuildCounter()
                          .Name("portcullis_verifier_fetch_refusals_total")
                          .Help("Egress policy refusals, by stage (url, redirect, dns, connect) "
                                "and reason (the refused block, or the URL rule).")
                          .Register(registry)),
      queued_(prometheus::BuildGauge()
                  .Name("portcullis_verifier_fetch_queued")
                  .Help("Fetches (limit=global), hops (limit=host) or connections "
                        "(limit=address) waiting for a slot.")
                  .Register(registry)),
      queue_wait_(prometheus::BuildHistogram()
                      .Name("portcullis_verifier_fetch_queue_wait_seconds")
                      .Help("Time waited for a global, per-host or per-address slot, by limit.")
                      .Register(registry)) {}

void FetchMetrics::OnFetchStarted() { in_flight_.Increment(); }

void FetchMetrics::OnFetchFinished(const FetchResult& result, absl::Duration elapsed) {
  in_flight_.Decrement();
  const std::string outcome(FetchOutcomeName(result.outcome));
  fetches_total_.Add({{"outcome", outcome}}).Increment();
  fetch_duration_.Add({{"outcome", outcome}}, SecondsBuckets())
      .Observe(absl::ToDoubleSeconds(elapsed));
  body_bytes_total_.Increment(static_cast<double>(result.body.size()));
}

void FetchMetrics::OnLookup(const absl::Status& status, absl::Duration elapsed) {
  dns_duration_.Add({{"result", LookupResult(status)}}, SecondsBuckets())
      .Observe(absl::ToDoubleSeconds(elapsed));
}

void FetchMetrics::OnRefused(absl::string_view stage, absl::string_view reason) {
  refusals_total_.Add({{"stage", std::string(stage)}, {"reason", std::string(reason)}}).Increment();
}

void FetchMetrics::OnQueued(absl::string_view limit) {
  queued_.Add({{"limit", std::string(limit)}}).Increment();
}

void FetchMetrics::OnDequeued(absl::string_view limit, absl::Duration waited) {
  queued_.Add({{"limit", std::string(limit)}}).Decrement();
  queue_wait_.Add({{"limit", std::string(limit)}}, SecondsBuckets())
      .Observe(absl::ToDoubleSeconds(waited));
}

}  // namespace portcullis::verifier::fetch
