#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "common/lifecycle/thread_name.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

struct BatchWriterOptions {
  // Writer threads, each with a connection of its own (not the pool the workers and the other
  // RPCs share), so that a commit in flight never waits for a free connection.
  int writers = 2;
  // Most items one batch (one transaction, one commit) carries.
  int max_batch = 256;
  // Most items waiting for a writer; beyond it Submit answers UNAVAILABLE at once.
  int max_queued = 4096;
  // database_url and statement_timeout of the writers' connections (the size is theirs: one each).
  PgPoolOptions connection;
};

// Items written in batches (issue 21; MentionWriter and IngestWriter are its two uses): Submit
// queues and returns; each writer takes whatever is queued (up to max_batch) whenever it is free,
// so batches form by themselves under load, and an idle writer takes a lone item at once (no
// timer, no added latency). A batch is one call of the write function: one transaction, one
// commit. Every item is answered after its batch committed (nothing is acknowledged before it is
// durable), with its own result; a database that cannot answer fails the whole batch
// (UNAVAILABLE or DEADLINE_EXCEEDED); any other error runs the batch again one item at a time, so
// that only the item that causes it fails.
template <typename Item, typename Result>
class BatchWriter {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<Result>) &&>;
  using Results = std::vector<absl::StatusOr<Result>>;
  // Writes `batch` in ONE transaction on `connection`, committed before it returns: one result
  // per item, in order. Runs inside PgConnectionPool::Run, which turns what it throws into a
  // status.
  using WriteBatch = std::function<Results(pqxx::connection&, absl::Span<const Item>)>;
  struct Queued {
    Item item;
    Done done;
  };

  // Starts the writers (they connect when their first batch comes). `name` names the batch and
  // single-item statements in the connections' errors and metrics.
  static absl::StatusOr<std::unique_ptr<BatchWriter>> Start(std::string name, WriteBatch write,
                                                            BatchWriterOptions options) {
    if (options.writers < 1 || options.max_batch < 1 || options.max_queued < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " writer: writers, max_batch and max_queued must be positive"));
    }
    std::unique_ptr<BatchWriter> writer(
        new BatchWriter(std::move(name), std::move(write), std::move(options)));
    ASSIGN_OR_RETURN(writer->connections_,
                     OpenWriterConnections(writer->options_.connection, writer->options_.writers));
    for (const std::unique_ptr<PgConnectionPool>& pool : writer->connections_) {
      writer->threads_.emplace_back([w = writer.get(), p = pool.get()] {
        portcullis::lifecycle::NameCurrentThread("batch-writer");
        w->Write(*p);
      });
    }
    return writer;
  }

  ~BatchWriter() { Stop(); }

  // Calls `done` exactly once, from a writer thread once the item's batch committed, or at once
  // with UNAVAILABLE when max_queued items are waiting or the writer is stopping.
  void Submit(Item item, Done done) {
    {
      absl::MutexLock lock(&mu_);
      if (!stopping_ && static_cast<int>(queue_.size()) < options_.max_queued) {
        queue_.push_back({std::move(item), std::move(done)});
        return;
      }
    }
    std::move(done)(Overloaded());
  }

  // Submit for each of `items`, taken in together while fewer than max_queued are waiting (so the
  // queue overshoots max_queued by less than one call's items), or all answered UNAVAILABLE; the
  // writers may still split them over several batches.
  void SubmitAll(std::vector<Queued> items) {
    {
      absl::MutexLock lock(&mu_);
      if (!stopping_ && static_cast<int>(queue_.size()) < options_.max_queued) {
        std::move(items.begin(), items.end(), std::back_inserter(queue_));
        return;
      }
    }
    for (Queued& queued : items) {
      std::move(queued.done)(Overloaded());
    }
  }

  // Takes no more items (they are answered UNAVAILABLE), writes what is queued, and joins the
  // writers. Idempotent.
  void Stop() {
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

  // Batches and items written so far (their ratio is the mean batch size).
  int64_t batches() const { return batches_.load(); }
  int64_t items() const { return items_.load(); }

 private:
  BatchWriter(std::string name, WriteBatch write, BatchWriterOptions options)
      : name_(std::move(name)), write_(std::move(write)), options_(std::move(options)) {}

  static absl::Status Overloaded() {
    return absl::UnavailableError("verifier overloaded, retry later");
  }

  void Write(PgConnectionPool& connection) {
    for (;;) {
      std::vector<Queued> taken;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](BatchWriter* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
              return w->stopping_ || !w->queue_.empty();
            },
            this));
        if (queue_.empty()) {
          return;  // Stopping, and nothing left to write.
        }
        const size_t n = std::min(queue_.size(), static_cast<size_t>(options_.max_batch));
        taken.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          taken.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      std::vector<Item> batch;
      batch.reserve(taken.size());
      for (Queued& queued : taken) {
        batch.push_back(std::move(queued.item));
      }
      Results results = WriteOrSplit(connection, batch);
      batches_.fetch_add(1);
      items_.fetch_add(static_cast<int64_t>(taken.size()));
      for (size_t i = 0; i < taken.size(); ++i) {
        std::move(taken[i].done)(std::move(results[i]));
      }
    }
  }

  Results WriteOrSplit(PgConnectionPool& connection, const std::vector<Item>& batch) {
    Results results;
    const absl::Status status = connection.Run(
        name_, [&](pqxx::connection& c) { results = write_(c, absl::MakeConstSpan(batch)); });
    if (status.ok()) {
      return results;
    }
    if (status.code() != absl::StatusCode::kInternal || batch.size() == 1) {
      return Results(batch.size(), status);
    }
    // Not the database's availability but something in the batch: one at a time.
    results.clear();
    for (const Item& item : batch) {
      Results one;
      const absl::Status alone = connection.Run(
          name_, [&](pqxx::connection& c) { one = write_(c, absl::MakeConstSpan(&item, 1)); });
      results.push_back(alone.ok() ? std::move(one.front()) : absl::StatusOr<Result>(alone));
    }
    return results;
  }

  const std::string name_;
  const WriteBatch write_;
  const BatchWriterOptions options_;
  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<PgConnectionPool>> connections_;
  std::vector<std::thread> threads_;
  std::atomic<int64_t> batches_{0};
  std::atomic<int64_t> items_{0};
};

}  // namespace portcullis::verifier::store
