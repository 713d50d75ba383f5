#include "verifier-service/src/store/ingest_writer.h"

#include <algorithm>
#include <utility>

#include "common/status/status_macros.h"

namespace portcullis::verifier::store {

absl::StatusOr<std::unique_ptr<IngestWriter>> IngestWriter::Start(PgIngestStore& store,
                                                                  IngestWriterOptions options) {
  if (options.writers < 1 || options.max_batch < 1 || options.max_queued < 1) {
    return absl::InvalidArgumentError(
        "ingest writer: writers, max_batch and max_queued must be positive");
  }
  std::unique_ptr<IngestWriter> writer(new IngestWriter(store, options));
  ASSIGN_OR_RETURN(writer->connections_,
                   OpenWriterConnections(options.connection, options.writers));
  for (const std::unique_ptr<PgConnectionPool>& pool : writer->connections_) {
    writer->threads_.emplace_back([w = writer.get(), p = pool.get()] { w->Write(*p); });
  }
  return writer;
}

IngestWriter::~IngestWriter() { Stop(); }

void IngestWriter::Stop() {
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

void IngestWriter::Record(NewDecision next, absl::Time now, Done done) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && static_cast<int>(queue_.size()) < options_.max_queued) {
      queue_.push_back({std::move(next), now, std::move(done)});
      return;
    }
  }
  std::move(done)(absl::UnavailableError("verifier overloaded, retry later"));
}

void IngestWriter::Write(PgConnectionPool& connection) {
  for (;;) {
    std::vector<Queued> taken;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](IngestWriter* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
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
    // One `now` for the batch (the latest of its decisions'): whether a stored decision has
    // expired is judged once per transaction.
    absl::Time now = absl::InfinitePast();
    std::vector<NewDecision> batch;
    batch.reserve(taken.size());
    for (Queued& queued : taken) {
      now = std::max(now, queued.now);
      batch.push_back(std::move(queued.next));
    }
    std::vector<absl::StatusOr<RecordResult>> results = WriteBatch(connection, batch, now);
    batches_.fetch_add(1);
    decisions_.fetch_add(static_cast<int64_t>(taken.size()));
    for (size_t i = 0; i < taken.size(); ++i) {
      std::move(taken[i].done)(std::move(results[i]));
    }
  }
}

std::vector<absl::StatusOr<RecordResult>> IngestWriter::WriteBatch(
    PgConnectionPool& connection, const std::vector<NewDecision>& batch, absl::Time now) {
  std::vector<absl::StatusOr<RecordResult>> results;
  const absl::Status status = connection.Run("record_ingest_decisions", [&](pqxx::connection& c) {
    results = store_.RecordBatch(c, batch, now);
  });
  if (status.ok()) {
    return results;
  }
  if (status.code() != absl::StatusCode::kInternal || batch.size() == 1) {
    return std::vector<absl::StatusOr<RecordResult>>(batch.size(), status);
  }
  // Not the database's availability but something in the batch: one at a time.
  results.clear();
  for (const NewDecision& next : batch) {
    std::vector<absl::StatusOr<RecordResult>> one;
    const absl::Status alone = connection.Run("record_ingest_decision", [&](pqxx::connection& c) {
      one = store_.RecordBatch(c, absl::MakeConstSpan(&next, 1), now);
    });
    results.push_back(alone.ok() ? std::move(one.front()) : absl::StatusOr<RecordResult>(alone));
  }
  return results;
}

}  // namespace portcullis::verifier::store
