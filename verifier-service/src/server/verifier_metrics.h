#pragma once

// The verifier's scaling metrics, served on --admin_listen /metrics and read by the HPA
// (deploy/k8s/base/verifier-service/hpa.yaml; scripts/check-deploy checks that the names there
// are the names below):
//   portcullis_verifier_queue_depth              verification jobs due now and not leased to any
//                                                worker, in the whole (shared) queue; sampled by a
//                                                background thread, never per scrape, and capped.
//   portcullis_verifier_verifications_in_flight  verifications this process is running right now.

#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "verifier-service/src/queue/mention_verifier.h"

namespace portcullis::verifier::server {

inline constexpr char kQueueDepthMetric[] = "portcullis_verifier_queue_depth";
inline constexpr char kVerificationsInFlightMetric[] =
    "portcullis_verifier_verifications_in_flight";
// The queue depth saturates here: counting stops after this many due rows, so one sample costs
// at most this many index entries however long the backlog (far beyond any HPA target).
inline constexpr int64_t kQueueDepthCap = 10000;
// How often the queue depth is sampled (one capped query per pod per interval, whatever the
// scrape rate).
inline constexpr absl::Duration kQueueDepthInterval = absl::Seconds(5);

// Counts the verifications running through it in portcullis_verifier_verifications_in_flight:
// the worker is handed this instead of the real verifier. The gauge is registered (at 0) even
// when nothing verifies, so the HPA always finds it.
class InFlightVerifier final : public queue::MentionVerifier {
 public:
  // `inner` (which Verify calls; null only when Verify is never called, as with 0 workers) and
  // `registry` must outlive this object.
  InFlightVerifier(queue::MentionVerifier* inner, prometheus::Registry& registry);

  queue::VerificationOutcome Verify(const store::JobRecord& job) override;
  // Counted from the start until `done` is called (the verification holds no thread meanwhile).
  void VerifyAsync(const store::JobRecord& job, Done done) override;

 private:
  queue::MentionVerifier* inner_;
  prometheus::Gauge& in_flight_;
};

// Sets portcullis_verifier_queue_depth from `sample` (a capped count of due jobs) at once and
// then every `interval` on its own thread. A failed sample keeps the last value and counts
// portcullis_verifier_queue_depth_sample_errors_total.
class QueueDepthSampler {
 public:
  using Sample = absl::AnyInvocable<absl::StatusOr<int64_t>()>;

  // `registry` must outlive this object.
  QueueDepthSampler(Sample sample, absl::Duration interval, prometheus::Registry& registry);
  // Stop().
  ~QueueDepthSampler();

  QueueDepthSampler(const QueueDepthSampler&) = delete;
  QueueDepthSampler& operator=(const QueueDepthSampler&) = delete;

  void Start();
  // Joins the thread (a sample in progress finishes first). Idempotent.
  void Stop();

 private:
  void Loop();

  Sample sample_;
  const absl::Duration interval_;
  prometheus::Gauge& depth_;
  prometheus::Counter& errors_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace portcullis::verifier::server
