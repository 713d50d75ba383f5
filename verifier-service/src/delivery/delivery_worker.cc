#include "verifier-service/src/delivery/delivery_worker.h"

#include <algorithm>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/logging/log.h"
#include "verifier-service/src/delivery/delivery_policy.h"
#include "verifier-service/src/delivery/webhook_signer.h"

namespace portcullis::verifier::delivery {
namespace {

// Deliveries claimed per statement at most.
constexpr int kClaimBatch = 16;
// The queue depth gauge saturates here (one sample reads at most this many index entries).
constexpr int64_t kDepthCap = 10000;
// A receiver's answer body is never used; a little is read at most.
constexpr int64_t kMaxAnswerBytes = 4096;

}  // namespace

DeliveryWorker::DeliveryWorker(store::DeliveryStore& store, fetch::SafeFetcher& fetcher,
                               prometheus::Registry& registry, DeliveryWorkerOptions options)
    : store_(store),
      fetcher_(fetcher),
      options_(std::move(options)),
      attempts_(prometheus::BuildCounter()
                    .Name("portcullis_verifier_delivery_attempts_total")
                    .Help("Outbound delivery attempts by event type and result (delivered, gone, "
                          "http_4xx, http_5xx, http_429, timeout, connection_failed, forbidden, "
                          "...).")
                    .Register(registry)),
      depth_(prometheus::BuildGauge()
                 .Name("portcullis_verifier_delivery_queue_depth")
                 .Help("Outbound deliveries pending (of active subscriptions), sampled, capped.")
                 .Register(registry)
                 .Add({})),
      oldest_age_(prometheus::BuildGauge()
                      .Name("portcullis_verifier_delivery_oldest_undelivered_age_seconds")
                      .Help("Age of the oldest pending outbound delivery; 0 when none.")
                      .Register(registry)
                      .Add({})) {}

DeliveryWorker::~DeliveryWorker() { Stop(); }

void DeliveryWorker::Start() {
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this, i] { Loop(i == 0); });
  }
}

void DeliveryWorker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) {
    if (thread.joinable()) {
      thread.join();
    }
  }
  threads_.clear();
}

prometheus::Counter& DeliveryWorker::Attempts(const std::string& event, const std::string& result) {
  return attempts_.Add({{"event", event}, {"result", result}});
}

void DeliveryWorker::Loop(bool samples_stats) {
  absl::Time next_stats = absl::InfinitePast();
  while (true) {
    std::deque<Completion> done;
    int free = 0;
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      done.swap(completions_);
      stopping = stopping_;
      free = options_.max_in_flight - in_flight_;
      if (stopping && done.empty() && in_flight_ == 0) {
        return;
      }
    }
    Record(done);
    if (samples_stats && absl::Now() >= next_stats) {
      SampleStats();
      next_stats = absl::Now() + options_.stats_interval;
    }
    bool full_batch = false;
    if (!stopping && free > 0) {
      absl::StatusOr<std::vector<store::ClaimedDelivery>> claimed =
          store_.Claim(options_.owner, std::min(free, kClaimBatch), options_.lease);
      if (!claimed.ok()) {
        logging::Warn("deliveries: cannot claim: {}", std::string(claimed.status().message()));
      } else {
        full_batch = static_cast<int>(claimed->size()) == std::min(free, kClaimBatch);
        {
          absl::MutexLock lock(&mu_);
          in_flight_ += static_cast<int>(claimed->size());
        }
        for (store::ClaimedDelivery& delivery : *claimed) {
          Send(std::move(delivery));
        }
      }
    }
    if (full_batch) {
      continue;  // More may be due at once.
    }
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(
        absl::Condition(
            +[](DeliveryWorker* worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(worker->mu_) {
              return !worker->completions_.empty() ||
                     (worker->stopping_ && worker->in_flight_ == 0);
            },
            this),
        options_.poll_interval);
  }
}

void DeliveryWorker::Send(store::ClaimedDelivery delivery) {
  const absl::Time started = absl::Now();
  const int64_t timestamp = absl::ToUnixSeconds(started);
  absl::StatusOr<std::string> signature =
      Sign(SigningKey{delivery.signature_version, delivery.signing_key}, delivery.webhook_id,
           timestamp, delivery.body);
  if (!signature.ok()) {
    fetch::FetchResult refused;
    refused.outcome = fetch::FetchOutcome::kBadUrl;
    refused.detail = std::string(signature.status().message());
    absl::MutexLock lock(&mu_);
    completions_.push_back({std::move(delivery), std::move(refused), absl::ZeroDuration()});
    return;
  }
  fetch::OutboundPost post;
  post.body = delivery.body;
  post.headers = {{"Content-Type", "application/json"},
                  {"webhook-id", delivery.webhook_id},
                  {"webhook-timestamp", absl::StrCat(timestamp)},
                  {"webhook-signature", *std::move(signature)}};
  const std::string url = delivery.url;
  fetcher_.Post(
      url, std::move(post), {0, options_.timeout, kMaxAnswerBytes},
      [this, delivery = std::move(delivery), started](fetch::FetchResult result) mutable {
        // On the fetcher's thread: only queue it; a worker thread records it.
        absl::MutexLock lock(&mu_);
        completions_.push_back({std::move(delivery), std::move(result), absl::Now() - started});
      });
}

void DeliveryWorker::Record(const std::deque<Completion>& done) {
  if (done.empty()) {
    return;
  }
  static thread_local absl::BitGen random;
  std::vector<store::AttemptRecord> attempts;
  attempts.reserve(done.size());
  for (const Completion& completion : done) {
    const store::ClaimedDelivery& delivery = completion.delivery;
    const AttemptVerdict verdict = Judge(completion.result);
    const NextStep step = Decide(delivery.attempts, verdict, completion.result.retry_after,
                                 absl::Now(), absl::Uniform(random, -1.0, 1.0));
    store::AttemptRecord attempt;
    attempt.delivery_id = delivery.id;
    attempt.subscription_id = delivery.subscription_id;
    attempt.state = step.state;
    attempt.next_attempt_at = step.next_attempt_at;
    attempt.status_code = completion.result.status;
    attempt.error = verdict.error;
    attempt.latency = completion.latency;
    attempt.disable_reason = step.disable_reason;
    Attempts(delivery.event_type, verdict.label).Increment();
    if (step.disable_reason.has_value()) {
      logging::Warn("deliveries: subscription={} disabled: {}", delivery.subscription_id,
                    *step.disable_reason);
    }
    attempts.push_back(std::move(attempt));
  }
  // One transaction (one commit) for every answer this pass took.
  absl::StatusOr<int> recorded = store_.RecordAttempts(options_.owner, attempts);
  if (!recorded.ok()) {
    // Their leases run out and they are sent again (same webhook-id).
    logging::Warn("deliveries: cannot record {} attempts: {}", attempts.size(),
                  std::string(recorded.status().message()));
  }
  absl::MutexLock lock(&mu_);
  in_flight_ -= static_cast<int>(done.size());
}

void DeliveryWorker::SampleStats() {
  absl::StatusOr<store::DeliveryQueueStats> stats = store_.QueueStats(kDepthCap);
  if (!stats.ok()) {
    return;
  }
  depth_.Set(static_cast<double>(stats->depth));
  oldest_age_.Set(absl::ToDoubleSeconds(stats->oldest_age));
}

}  // namespace portcullis::verifier::delivery
