#include "verifier-service/src/ingest/decision_sweeper.h"

#include <utility>

#include "common/logging/log.h"

namespace portcullis::verifier::ingest {

DecisionSweeper::DecisionSweeper(store::IngestStore& store, DecisionSweeperOptions options)
    : store_(store), options_(std::move(options)) {}

DecisionSweeper::~DecisionSweeper() { Stop(); }

absl::StatusOr<int64_t> DecisionSweeper::SweepOnce() {
  const absl::Time now = options_.clock();
  int64_t total = 0;
  for (int i = 0; i < options_.max_batches_per_pass; ++i) {
    absl::StatusOr<int64_t> deleted = store_.SweepExpired(now, options_.batch);
    if (!deleted.ok()) {
      return deleted.status();
    }
    total += *deleted;
    if (*deleted < options_.batch) {
      break;
    }
  }
  return total;
}

void DecisionSweeper::Start() {
  absl::MutexLock lock(&mu_);
  if (thread_.joinable() || stopping_) {
    return;
  }
  thread_ = std::thread([this] { Loop(); });
}

void DecisionSweeper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

void DecisionSweeper::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.interval)) {
        return;
      }
    }
    absl::StatusOr<int64_t> deleted = SweepOnce();
    if (!deleted.ok()) {
      logging::Warn("ingest decision sweep failed, retrying in {}: {}",
                    absl::FormatDuration(options_.interval),
                    std::string(deleted.status().message()));
    } else if (*deleted > 0) {
      logging::Debug("ingest decisions swept count={}", *deleted);
    }
  }
}

}  // namespace portcullis::verifier::ingest
