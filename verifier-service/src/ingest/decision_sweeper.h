#pragma once

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/ingest_store.h"

namespace portcullis::verifier::ingest {

struct DecisionSweeperOptions {
  // Time between passes.
  absl::Duration interval = absl::Minutes(1);
  // Rows deleted per statement at most (short statements, short locks).
  int batch = 500;
  // Statements per pass at most; the rest waits for the next pass.
  int max_batches_per_pass = 100;
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

// Deletes expired ingest decisions in small batches, on its own thread. Expired decisions are
// already not duplicates (the store ignores them); sweeping only keeps the table small. Several
// pods may sweep at once: deletes of the same rows simply find them gone.
class DecisionSweeper {
 public:
  // `store` must outlive the sweeper.
  DecisionSweeper(store::IngestStore& store, DecisionSweeperOptions options);
  ~DecisionSweeper();

  DecisionSweeper(const DecisionSweeper&) = delete;
  DecisionSweeper& operator=(const DecisionSweeper&) = delete;

  // One pass: batches until one comes back short (or the pass limit); the rows deleted.
  absl::StatusOr<int64_t> SweepOnce();

  // Runs a pass every interval until Stop(). Failures are logged and retried next interval.
  void Start();
  // Idempotent; waits for a pass in progress to finish.
  void Stop();

 private:
  void Loop();

  store::IngestStore& store_;
  const DecisionSweeperOptions options_;
  std::thread thread_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace portcullis::verifier::ingest
