#include "verifier-service/src/store/mention_writer.h"

#include <utility>

#include "common/status/status_macros.h"

namespace portcullis::verifier::store {

absl::StatusOr<std::unique_ptr<MentionWriter>> MentionWriter::Start(
    PgMentionStore& store, MentionWriterOptions options) {
  if (options.writers < 1 || options.max_batch < 1 || options.max_queued < 1) {
    return absl::InvalidArgumentError(
        "mention writer: writers, max_batch and max_queued must be positive");
  }
  std::unique_ptr<MentionWriter> writer(new MentionWriter(store, options));
  ASSIGN_OR_RETURN(writer->connections_,
                   OpenWriterConnections(options.connection, options.writers));
  for (const std::unique_ptr<PgConnectionPool>& pool : writer->connections_) {
    writer->threads_.emplace_back([w = writer.get(), p = pool.get()] { w->Write(*p); });
  }
  return writer;
}

MentionWriter::~MentionWriter() { Stop(); }

void MentionWriter::Stop() {
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

void MentionWriter::Submit(NewMention mention, Done done) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && static_cast<int>(queue_.size()) < options_.max_queued) {
      queue_.push_back({std::move(mention), std::move(done)});
      return;
    }
  }
  std::move(done)(absl::UnavailableError("verifier overloaded, retry later"));
}

void MentionWriter::SubmitAll(std::vector<Submission> submissions) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && static_cast<int>(queue_.size()) < options_.max_queued) {
      for (Submission& submission : submissions) {
        queue_.push_back(std::move(submission));
      }
      return;
    }
  }
  for (Submission& submission : submissions) {
    std::move(submission.done)(absl::UnavailableError("verifier overloaded, retry later"));
  }
}

void MentionWriter::Write(PgConnectionPool& connection) {
  for (;;) {
    std::vector<Queued> taken;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](MentionWriter* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
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
    std::vector<NewMention> batch;
    batch.reserve(taken.size());
    for (Queued& queued : taken) {
      batch.push_back(std::move(queued.mention));
    }
    std::vector<absl::StatusOr<SubmitResult>> results = WriteBatch(connection, batch);
    batches_.fetch_add(1);
    submissions_.fetch_add(static_cast<int64_t>(taken.size()));
    for (size_t i = 0; i < taken.size(); ++i) {
      std::move(taken[i].done)(std::move(results[i]));
    }
  }
}

std::vector<absl::StatusOr<SubmitResult>> MentionWriter::WriteBatch(
    PgConnectionPool& connection, const std::vector<NewMention>& batch) {
  std::vector<absl::StatusOr<SubmitResult>> results;
  const absl::Status status = connection.Run("submit_mentions", [&](pqxx::connection& c) {
    results = store_.SubmitBatch(c, batch);
  });
  if (status.ok()) {
    return results;
  }
  if (status.code() != absl::StatusCode::kInternal || batch.size() == 1) {
    return std::vector<absl::StatusOr<SubmitResult>>(batch.size(), status);
  }
  // Not the database's availability but something in the batch: one at a time.
  results.clear();
  for (const NewMention& mention : batch) {
    std::vector<absl::StatusOr<SubmitResult>> one;
    const absl::Status alone = connection.Run("submit_mention", [&](pqxx::connection& c) {
      one = store_.SubmitBatch(c, absl::MakeConstSpan(&mention, 1));
    });
    results.push_back(alone.ok() ? std::move(one.front()) : absl::StatusOr<SubmitResult>(alone));
  }
  return results;
}

}  // namespace portcullis::verifier::store
