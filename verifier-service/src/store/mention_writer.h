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
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/pg_mention_store.h"

namespace portcullis::verifier::store {

struct MentionWriterOptions {
  // Writer threads, each with a connection of its own (not the pool the workers and the other
  // RPCs share), so that a commit in flight never waits for a free connection.
  int writers = 2;
  // Most submissions one batch (one transaction, one commit) carries.
  int max_batch = 256;
  // Most submissions waiting for a writer; beyond it Submit answers UNAVAILABLE at once.
  int max_queued = 4096;
  // database_url and statement_timeout of the writers' connections (the size is theirs: one each).
  PgPoolOptions connection;
};

// Submissions written in batches: Submit queues and returns; each writer takes whatever is queued
// (up to max_batch) whenever it is free, so batches form by themselves under load, and an idle
// writer takes a lone submission at once (no timer, no added latency). A batch is one
// PgMentionStore::SubmitBatch: one transaction, one commit, one NOTIFY. Every submission is
// answered after its batch committed (nothing is acknowledged before it is durable), with its
// own answer: admission refusals are per submission; a database that cannot answer fails the
// whole batch (UNAVAILABLE or DEADLINE_EXCEEDED); any other error runs the batch again one
// submission at a time, so that only the submission that causes it fails.
class MentionWriter final : public MentionSubmitter {
 public:
  // Starts the writers (they connect when their first batch comes). `store` must outlive this.
  static absl::StatusOr<std::unique_ptr<MentionWriter>> Start(PgMentionStore& store,
                                                              MentionWriterOptions options);
  ~MentionWriter() override;

  void Submit(NewMention mention, Done done) override;
  // Queued together while fewer than max_queued are waiting (so the queue overshoots max_queued
  // by less than one call's items); the writers may still split them over several batches.
  void SubmitAll(std::vector<Submission> submissions) override;

  // Takes no more submissions (they are answered UNAVAILABLE), writes what is queued, and joins
  // the writers. Idempotent.
  void Stop();

  // Batches and submissions written so far (their ratio is the mean batch size).
  int64_t batches() const { return batches_.load(); }
  int64_t submissions() const { return submissions_.load(); }

 private:
  using Queued = Submission;

  MentionWriter(PgMentionStore& store, MentionWriterOptions options)
      : store_(store), options_(std::move(options)) {}
  void Write(PgConnectionPool& connection);
  std::vector<absl::StatusOr<SubmitResult>> WriteBatch(PgConnectionPool& connection,
                                                       const std::vector<NewMention>& batch);

  PgMentionStore& store_;
  const MentionWriterOptions options_;
  absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<PgConnectionPool>> connections_;
  std::vector<std::thread> threads_;
  std::atomic<int64_t> batches_{0};
  std::atomic<int64_t> submissions_{0};
};

}  // namespace portcullis::verifier::store
