#pragma once

#include "verifier-service/src/store/job_store.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

// JobStore on PostgreSQL (table `verification_jobs`, migrations/0003_create_verification_jobs.sql).
class PgJobStore final : public JobStore {
 public:
  // `pool` must outlive the store.
  explicit PgJobStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<std::vector<JobRecord>> Claim(const std::string& owner, int limit,
                                               absl::Duration lease) override;
  absl::StatusOr<int> RenewLeases(const std::string& owner, absl::Span<const int64_t> job_ids,
                                  absl::Duration lease) override;
  absl::Status Finish(int64_t job_id, const std::string& owner, const JobResult& result) override;
  // One transaction for the whole batch (jobs locked in job id order); if it fails as a whole
  // (a deadlock with an intake transaction, say), each job is finished on its own instead.
  std::vector<absl::Status> FinishBatch(const std::string& owner,
                                        absl::Span<const FinishRequest> requests) override;
  absl::Status ReleaseAll(const std::string& owner) override;
  absl::StatusOr<std::optional<absl::Duration>> NextDueIn() override;
  absl::StatusOr<MentionClaim> ClaimMention(const std::string& mention_id, const std::string& owner,
                                            absl::Duration lease) override;

 private:
  PgConnectionPool& pool_;
};

// The LISTEN/NOTIFY channel on which queued jobs are announced.
inline constexpr char kJobsChannel[] = "portcullis_verification_jobs";

}  // namespace portcullis::verifier::store
