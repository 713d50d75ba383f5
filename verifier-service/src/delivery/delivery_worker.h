#pragma once

// DeliveryWorker: sends the deliveries outbox (issue 20). A few threads claim due deliveries
// under a lease (FOR UPDATE SKIP LOCKED: several verifier pods share the outbox as they share
// verification jobs; a killed pod's deliveries are taken again when their lease runs out, and
// are sent with the same webhook-id), sign each one (webhook_signer.h) and POST it through the
// SSRF-guarded fetcher given (its own per-destination cap and short deadline), without holding a
// thread while a receiver answers: the answer is queued and a worker thread records it
// (delivery_policy.h decides what comes next).
//
// Metrics (all in `registry`):
//   portcullis_verifier_delivery_attempts_total{event, result}   each attempt's outcome
//   portcullis_verifier_delivery_queue_depth                     pending deliveries (capped)
//   portcullis_verifier_delivery_oldest_undelivered_age_seconds  age of the oldest of them

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "verifier-service/src/fetch/safe_fetcher.h"
#include "verifier-service/src/store/delivery_store.h"

namespace portcullis::verifier::delivery {

struct DeliveryWorkerOptions {
  // Names this process's leases.
  std::string owner;
  // Threads claiming and recording.
  int threads = 2;
  // Deliveries sent and not yet answered, at most (over all threads).
  int max_in_flight = 64;
  // Lease of a claimed delivery; longer than `timeout`.
  absl::Duration lease = absl::Seconds(60);
  // Deadline of one attempt (connect to last byte).
  absl::Duration timeout = absl::Seconds(10);
  // Longest wait for new due deliveries while idle.
  absl::Duration poll_interval = absl::Milliseconds(500);
  // How often the queue gauges are sampled.
  absl::Duration stats_interval = absl::Seconds(5);
};

class DeliveryWorker {
 public:
  // Borrows all of them; they must outlive the worker. `fetcher` is the deliveries' own.
  DeliveryWorker(store::DeliveryStore& store, fetch::SafeFetcher& fetcher,
                 prometheus::Registry& registry, DeliveryWorkerOptions options);
  // Stop().
  ~DeliveryWorker();

  DeliveryWorker(const DeliveryWorker&) = delete;
  DeliveryWorker& operator=(const DeliveryWorker&) = delete;

  void Start();
  // Claims nothing more, waits for the attempts in flight (at most their deadline) and records
  // them, then joins the threads. Idempotent.
  void Stop();

 private:
  struct Completion {
    store::ClaimedDelivery delivery;
    fetch::FetchResult result;
    absl::Duration latency;
  };

  void Loop(bool samples_stats);
  void Send(store::ClaimedDelivery delivery);
  // Decides each answer's next step and records them all in one transaction.
  void Record(const std::deque<Completion>& done);
  void SampleStats();
  prometheus::Counter& Attempts(const std::string& event, const std::string& result);

  store::DeliveryStore& store_;
  fetch::SafeFetcher& fetcher_;
  const DeliveryWorkerOptions options_;
  prometheus::Family<prometheus::Counter>& attempts_;
  prometheus::Gauge& depth_;
  prometheus::Gauge& oldest_age_;

  absl::Mutex mu_;
  std::deque<Completion> completions_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace portcullis::verifier::delivery
