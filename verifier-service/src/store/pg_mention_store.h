#pragma once

#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "pqxx/connection"

#include "verifier-service/src/store/admission_counters.h"
#include "verifier-service/src/store/mention_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// MentionStore on PostgreSQL (table `mentions`, migrations/0001_create_mentions.sql; reads
// `sites` and `targets`, migrations/0002_create_sites_and_targets.sql; queues into
// `verification_jobs`, migrations/0003_create_verification_jobs.sql; content and listing,
// migrations/0004_mention_content.sql).
class PgMentionStore final : public MentionStore {
 public:
  // `pool` must outlive the store. A FAILED mention submitted again starts over as PENDING once
  // its failure is older than `failed_retention`.
  explicit PgMentionStore(PgConnectionPool& pool,
                          absl::Duration failed_retention = absl::Hours(24));
  ~PgMentionStore() override;

  // Before use: the admission limits of Submit (none by default).
  void SetLimits(SubmitLimits limits);

  // SubmitBatch of one, on a connection of the pool.
  absl::StatusOr<SubmitResult> Submit(const NewMention& mention) override;

  // The submissions of `batch` (Submit's rules, each pair as if submitted alone, one after
  // another), decided in one transaction on `connection` and committed before it returns: one
  // answer per submission, in order. Admission refusals are per submission; the same pair twice
  // in one batch is stored once and answered with the same row (the later ones as repeats).
  // Throws what libpqxx throws: run it inside PgConnectionPool::Run, which maps that to a status
  // for the whole batch. Thread-safe, one connection per concurrent call.
  std::vector<absl::StatusOr<SubmitResult>> SubmitBatch(pqxx::connection& connection,
                                                        absl::Span<const NewMention> batch);

  absl::StatusOr<StoredMention> Get(absl::string_view mention_id,
                                    const SiteBinding& visible_sites) override;
  absl::StatusOr<MentionPage> List(const MentionQuery& query,
                                   const SiteBinding& visible_sites) override;
  absl::Status Ping() override;

 private:
  PgConnectionPool& pool_;
  const absl::Duration failed_retention_;
  std::unique_ptr<AdmissionCounters> admission_;
};

}  // namespace portcullis::verifier::store
