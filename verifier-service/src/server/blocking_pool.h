#pragma once

#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace portcullis::verifier::server {

// A fixed set of threads with a bounded queue, for work that blocks (database calls). gRPC
// reactions post here and return at once; when the queue is full the caller refuses the request
// (UNAVAILABLE) instead of letting latency grow without bound. Thread-safe.
class BlockingPool {
 public:
  // Starts `threads` threads (at least 1); at most `max_queued` tasks wait beyond those running.
  BlockingPool(int threads, size_t max_queued);
  // Stop().
  ~BlockingPool();

  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // Queues `task`. False, without running or keeping `task`, when the queue is full or the pool
  // is stopping.
  [[nodiscard]] bool TrySubmit(absl::AnyInvocable<void() &&> task);

  // Refuses new tasks, runs every task already queued, and joins the threads. Idempotent.
  void Stop();

  // Tasks waiting (not yet running). For tests and metrics.
  size_t queued() const;

 private:
  void WorkerLoop();

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
  absl::Mutex stop_mu_;  // Serializes Stop() callers around the joins.
};

}  // namespace portcullis::verifier::server
