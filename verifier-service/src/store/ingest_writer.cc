#include "verifier-service/src/store/ingest_writer.h"

#include <utility>

#include "common/status/status_macros.h"

namespace portcullis::verifier::store {

absl::StatusOr<std::unique_ptr<IngestWriter>> IngestWriter::Start(PgIngestStore& store,
                                                                  IngestWriterOptions options) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<Writer> writer,
      Writer::Start(
          "record_ingest_decisions",
          [&store](pqxx::connection& c, absl::Span<const DecisionAt> batch) {
            return store.RecordBatch(c, batch);
          },
          std::move(options)));
  return std::unique_ptr<IngestWriter>(new IngestWriter(std::move(writer)));
}

void IngestWriter::Record(NewDecision next, absl::Time now, Done done) {
  writer_->Submit({std::move(next), now}, std::move(done));
}

}  // namespace portcullis::verifier::store
