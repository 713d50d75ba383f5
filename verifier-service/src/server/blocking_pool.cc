#include "verifier-service/src/server/blocking_pool.h"

#include <algorithm>
#include <utility>

#include "common/lifecycle/thread_name.h"

namespace portcullis::verifier::server {

BlockingPool::BlockingPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  const int count = std::max(threads, 1);
  threads_.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    threads_.emplace_back([this] {
      portcullis::lifecycle::NameCurrentThread("blocking-pool");
      WorkerLoop();
    });
  }
}

BlockingPool::~BlockingPool() { Stop(); }

bool BlockingPool::TrySubmit(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= max_queued_) {
    return false;
  }
  queue_.push_back(std::move(task));
  return true;
}

void BlockingPool::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) {
    if (thread.joinable()) {
      thread.join();
    }
  }
}

size_t BlockingPool::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void BlockingPool::WorkerLoop() {
  while (true) {
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](BlockingPool* pool) ABSL_EXCLUSIVE_LOCKS_REQUIRED(pool->mu_) {
            return pool->stopping_ || !pool->queue_.empty();
          },
          this));
      if (queue_.empty()) {
        return;  // Stopping and drained.
      }
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::move(task)();
  }
}

}  // namespace portcullis::verifier::server
