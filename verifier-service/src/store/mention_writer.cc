#include "verifier-service/src/store/mention_writer.h"

#include <utility>

#include "common/status/status_macros.h"

namespace portcullis::verifier::store {

absl::StatusOr<std::unique_ptr<MentionWriter>> MentionWriter::Start(
    PgMentionStore& store, MentionWriterOptions options) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<Writer> writer,
      Writer::Start(
          "submit_mentions",
          [&store](pqxx::connection& c, absl::Span<const NewMention> batch) {
            return store.SubmitBatch(c, batch);
          },
          std::move(options)));
  return std::unique_ptr<MentionWriter>(new MentionWriter(std::move(writer)));
}

void MentionWriter::Submit(NewMention mention, Done done) {
  writer_->Submit(std::move(mention), std::move(done));
}

void MentionWriter::SubmitAll(std::vector<Submission> submissions) {
  std::vector<Writer::Queued> queued;
  queued.reserve(submissions.size());
  for (Submission& submission : submissions) {
    queued.push_back({std::move(submission.mention), std::move(submission.done)});
  }
  writer_->SubmitAll(std::move(queued));
}

}  // namespace portcullis::verifier::store
