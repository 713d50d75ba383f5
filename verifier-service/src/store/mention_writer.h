#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "verifier-service/src/store/batch_writer.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/pg_mention_store.h"

namespace portcullis::verifier::store {

using MentionWriterOptions = BatchWriterOptions;

// Submissions written in batches (BatchWriter): a batch is one PgMentionStore::SubmitBatch, one
// transaction, one commit, one NOTIFY. Admission refusals are per submission.
class MentionWriter final : public MentionSubmitter {
 public:
  // Starts the writers (they connect when their first batch comes). `store` must outlive this.
  static absl::StatusOr<std::unique_ptr<MentionWriter>> Start(PgMentionStore& store,
                                                              MentionWriterOptions options);

  void Submit(NewMention mention, Done done) override;
  void SubmitAll(std::vector<Submission> submissions) override;

  // Takes no more submissions (they are answered UNAVAILABLE), writes what is queued, and joins
  // the writers. Idempotent.
  void Stop() { writer_->Stop(); }

  // Batches and submissions written so far (their ratio is the mean batch size).
  int64_t batches() const { return writer_->batches(); }
  int64_t submissions() const { return writer_->items(); }

 private:
  using Writer = BatchWriter<NewMention, SubmitResult>;

  explicit MentionWriter(std::unique_ptr<Writer> writer) : writer_(std::move(writer)) {}

  std::unique_ptr<Writer> writer_;
};

}  // namespace portcullis::verifier::store
