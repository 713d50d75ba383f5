#include "verifier-service/src/server/verifier_metrics.h"

#include <utility>

#include "common/logging/log.h"

namespace portcullis::verifier::server {

InFlightVerifier::InFlightVerifier(queue::MentionVerifier* inner, prometheus::Registry& registry)
    : inner_(inner),
      in_flight_(prometheus::BuildGauge()
                     .Name(kVerificationsInFlightMetric)
                     .Help("Verifications this process is running now (at most "
                           "--max_verifications_in_flight).")
                     .Register(registry)
                     .Add({})) {}

queue::VerificationOutcome InFlightVerifier::Verify(const store::JobRecord& job) {
  in_flight_.Increment();
  struct Decrement {
    prometheus::Gauge& gauge;
    ~Decrement() { gauge.Decrement(); }
  } decrement{in_flight_};
  return inner_->Verify(job);
}

void InFlightVerifier::VerifyAsync(const store::JobRecord& job, Done done) {
  in_flight_.Increment();
  inner_->VerifyAsync(job,
                      [this, done = std::move(done)](queue::VerificationOutcome outcome) mutable {
                        in_flight_.Decrement();
                        std::move(done)(std::move(outcome));
                      });
}

QueueDepthSampler::QueueDepthSampler(Sample sample, absl::Duration interval,
                                     prometheus::Registry& registry)
    : sample_(std::move(sample)),
      interval_(interval),
      depth_(prometheus::BuildGauge()
                 .Name(kQueueDepthMetric)
                 .Help("Verification jobs due now and not leased, in the whole queue (shared by "
                       "every verifier); sampled every few seconds, saturates at 10000.")
                 .Register(registry)
                 .Add({})),
      errors_(prometheus::BuildCounter()
                  .Name("portcullis_verifier_queue_depth_sample_errors_total")
                  .Help("Queue depth samples that failed (the gauge keeps its last value).")
                  .Register(registry)
                  .Add({})) {}

QueueDepthSampler::~QueueDepthSampler() { Stop(); }

void QueueDepthSampler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void QueueDepthSampler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void QueueDepthSampler::Loop() {
  bool failing = false;
  while (true) {
    const absl::StatusOr<int64_t> depth = sample_();
    if (depth.ok()) {
      depth_.Set(static_cast<double>(*depth));
      failing = false;
    } else {
      errors_.Increment();
      if (!failing) {  // One line per outage, not one per sample.
        logging::Warn("queue depth not sampled: {}", std::string(depth.status().message()));
      }
      failing = true;
    }
    absl::MutexLock lock(&mu_);
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval_)) {
      return;
    }
  }
}

}  // namespace portcullis::verifier::server
