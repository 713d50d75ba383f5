#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_ingest_store.h"

namespace portcullis::verifier::store {

struct IngestWriterOptions {
  // Writer threads, each with a connection of its own (not the pool the workers and the other
  // RPCs share).
  int writers = 2;
  // Most decisions one batch (one transaction, one commit) carries.
  int max_batch = 256;
  // Most decisions waiting for a writer; beyond it Record answers UNAVAILABLE at once.
  int max_queued = 4096;
  // database_url and statement_timeout of the writers' connections (one each).
  PgPoolOptions connection;
};

// Ingest decisions written in batches (issue 21), as MentionWriter writes mentions: Record
// queues and returns; each writer takes whatever is queued (up to max_batch) whenever it is free
// (no timer: an idle writer takes a lone decision at once) and writes it with
// PgIngestStore::RecordBatch, one transaction and one commit for the batch. Each decision is
// answered after its batch committed (nothing acknowledged before it is durable), with its own
// result; a database that cannot answer fails the whole batch (UNAVAILABLE or
// DEADLINE_EXCEEDED); any other error runs the batch again one decision at a time, so that only
// the decision that causes it fails.
class IngestWriter final : public DecisionRecorder {
 public:
  // Starts the writers (they connect when their first batch comes). `store` must outlive this.
  static absl::StatusOr<std::unique_ptr<IngestWriter>> Start(PgIngestStore& store,
                                                             IngestWriterOptions options);
  ~IngestWriter() override;

  void Record(NewDecision next, absl::Time now, Done done) override;

  // Takes no more decisions (they are answered UNAVAILABLE), writes what is queued, and joins
  // the writers. Idempotent.
  void Stop();

  // Batches and decisions written so far (their ratio is the mean batch size).
  int64_t batches() const { return batches_.load(); }
  int64_t decisions() const { return decisions_.load(); }

 private:
  struct Queued {
    NewDecision next;
    absl::Time now;
    Done done;
  };

  IngestWriter(PgIngestStore& store, IngestWriterOptions options)
      : store_(store), options_(std::move(options)) {}
  void Write(PgConnectionPool& connection);
  std::vector<absl::StatusOr<RecordResult>> WriteBatch(PgConnectionPool& connection,
                                                       const std::vector<NewDecision>& batch,
                                                       absl::Time now);

  PgIngestStore& store_;
  const IngestWriterOptions options_;
  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<PgConnectionPool>> connections_;
  std::vector<std::thread> threads_;
  std::atomic<int64_t> batches_{0};
  std::atomic<int64_t> decisions_{0};
};

}  // namespace portcullis::verifier::store
