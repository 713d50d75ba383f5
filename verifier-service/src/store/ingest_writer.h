#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/batch_writer.h"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/pg_ingest_store.h"

namespace portcullis::verifier::store {

using IngestWriterOptions = BatchWriterOptions;

// Ingest decisions written in batches (BatchWriter), as MentionWriter writes mentions: a batch is
// one PgIngestStore::RecordBatch, one transaction and one commit.
class IngestWriter final : public DecisionRecorder {
 public:
  // Starts the writers (they connect when their first batch comes). `store` must outlive this.
  static absl::StatusOr<std::unique_ptr<IngestWriter>> Start(PgIngestStore& store,
                                                             IngestWriterOptions options);

  void Record(NewDecision next, absl::Time now, Done done) override;

  // Takes no more decisions (they are answered UNAVAILABLE), writes what is queued, and joins
  // the writers. Idempotent.
  void Stop() { writer_->Stop(); }

  // Batches and decisions written so far (their ratio is the mean batch size).
  int64_t batches() const { return writer_->batches(); }
  int64_t decisions() const { return writer_->items(); }

 private:
  using Writer = BatchWriter<DecisionAt, RecordResult>;

  explicit IngestWriter(std::unique_ptr<Writer> writer) : writer_(std::move(writer)) {}

  std::unique_ptr<Writer> writer_;
};

}  // namespace portcullis::verifier::store
