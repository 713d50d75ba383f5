#pragma once

// Concurrent single-item calls to the verifier sent as batch calls (issue 21), so that the cost
// of a gRPC call (its completion-queue and executor wake-ups on both sides, ~30 µs of CPU) is
// paid per batch instead of per HTTP request.
//
// Adaptive, without a timer: an item is sent at once, alone, while fewer than
// `max_calls_in_flight` calls are in flight (an idle gateway adds no latency); otherwise it
// waits, and whenever a call returns, everything waiting (up to `max_items_per_call` items and
// `max_bytes_per_call` bytes per call, a larger item alone) goes out as the next call. Under load
// the batches therefore grow to what arrived during one call.
//
// Each item keeps its own deadline: a call's deadline is the earliest of its items', and an item
// whose deadline passed while it waited is answered DEADLINE_EXCEEDED without being sent. Each
// item gets its own answer: the batch call's result for it, or, when the whole call failed, the
// call's status (the same mapping as a single call's failure).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace portcullis::gateway {

struct CallCoalescerOptions {
  // Batch calls in flight at most; while this many are, items wait for one to return.
  int max_calls_in_flight = 2;
  // Items one call carries at most (the verifier accepts 256).
  size_t max_items_per_call = 256;
  // Bytes (as `size_of` counts them) one call carries at most; an item larger than this goes
  // alone. Keeps a batch under the verifier's message limit (4 MiB).
  size_t max_bytes_per_call = 3 << 20;
};

template <typename Request, typename Response>
class CallCoalescer {
 public:
  // An item's answer; runs exactly once, on the thread that completed its call (or the caller's,
  // for an item answered at once), and must not block.
  using Callback = std::function<void(absl::StatusOr<Response>)>;

  struct Item {
    std::string request_id;
    Request request;
    absl::Time deadline;
    Callback callback;
  };

  // One result per item of the call, in order; or the call's status for every item.
  using Results = absl::StatusOr<std::vector<absl::StatusOr<Response>>>;
  using CallDone = absl::AnyInvocable<void(Results) &&>;
  // Sends `items` (valid until `done` runs) as one call with `deadline`; calls `done` exactly
  // once, from any thread (possibly before it returns).
  using SendCall =
      std::function<void(const std::vector<Item>& items, absl::Time deadline, CallDone done)>;
  // The bytes an item adds to a call.
  using SizeOf = std::function<size_t(const Request&)>;

  CallCoalescer(CallCoalescerOptions options, SendCall send, SizeOf size_of,
                std::function<absl::Time()> now = [] { return absl::Now(); })
      : options_(options),
        send_(std::move(send)),
        size_of_(std::move(size_of)),
        now_(std::move(now)) {}

  CallCoalescer(const CallCoalescer&) = delete;
  CallCoalescer& operator=(const CallCoalescer&) = delete;

  // Sends `request` in the next call; `callback` gets its answer by `deadline`.
  void Add(std::string request_id, Request request, absl::Time deadline, Callback callback) {
    Taken taken;
    {
      absl::MutexLock lock(&mu_);
      queue_.push_back(
          Item{std::move(request_id), std::move(request), deadline, std::move(callback)});
      if (in_flight_ >= options_.max_calls_in_flight) {
        return;  // Goes with the next call that returns.
      }
      taken = TakeLocked();
      if (!taken.items.empty()) {
        ++in_flight_;
      }
    }
    Dispatch(std::move(taken));
  }

  // Batch calls in flight now, and calls sent and items carried so far (their ratio is the mean
  // batch size).
  int in_flight() const {
    absl::MutexLock lock(&mu_);
    return in_flight_;
  }
  int64_t calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  int64_t items() const {
    absl::MutexLock lock(&mu_);
    return items_;
  }

 private:
  struct Taken {
    std::vector<Item> items;    // To send, in one call.
    std::vector<Item> expired;  // To answer DEADLINE_EXCEEDED.
  };

  // Up to one call's worth of the queue; items whose deadline has passed go to `expired`.
  Taken TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Taken taken;
    const absl::Time now = now_();
    size_t bytes = 0;
    while (!queue_.empty() && taken.items.size() < options_.max_items_per_call) {
      Item& next = queue_.front();
      if (next.deadline <= now) {
        taken.expired.push_back(std::move(next));
        queue_.pop_front();
        continue;
      }
      const size_t size = size_of_ ? size_of_(next.request) : 0;
      if (!taken.items.empty() && bytes + size > options_.max_bytes_per_call) {
        break;
      }
      bytes += size;
      taken.items.push_back(std::move(next));
      queue_.pop_front();
    }
    if (!taken.items.empty()) {
      ++calls_;
      items_ += static_cast<int64_t>(taken.items.size());
    }
    return taken;
  }

  // Answers the expired items and sends the rest (if any) as one call.
  void Dispatch(Taken taken) {
    for (Item& item : taken.expired) {
      item.callback(absl::DeadlineExceededError("verifier call timed out before it was sent"));
    }
    if (taken.items.empty()) {
      return;
    }
    auto* call = new std::vector<Item>(std::move(taken.items));
    absl::Time deadline = absl::InfiniteFuture();
    for (const Item& item : *call) {
      deadline = std::min(deadline, item.deadline);
    }
    send_(*call, deadline, [this, call](Results results) { Finished(call, std::move(results)); });
  }

  // A call returned: the next call goes out first (whatever waited), then its items are answered.
  void Finished(std::vector<Item>* call, Results results) {
    std::unique_ptr<std::vector<Item>> items(call);
    Taken next;
    {
      absl::MutexLock lock(&mu_);
      next = TakeLocked();
      if (next.items.empty()) {
        --in_flight_;
      }
    }
    Dispatch(std::move(next));
    if (results.ok() && results->size() != items->size()) {
      results = absl::InternalError("the verifier answered a batch with the wrong result count");
    }
    for (size_t i = 0; i < items->size(); ++i) {
      Item& item = (*items)[i];
      if (!results.ok()) {
        item.callback(results.status());
      } else {
        item.callback(std::move((*results)[i]));
      }
    }
  }

  const CallCoalescerOptions options_;
  const SendCall send_;
  const SizeOf size_of_;
  const std::function<absl::Time()> now_;

  mutable absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t calls_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t items_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace portcullis::gateway
