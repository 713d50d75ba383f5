#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "verifier-service/src/store/mention_content.h"

namespace portcullis::verifier::store {

// One claimed verification job, with what the verifier needs of its mention.
struct JobRecord {
  int64_t job_id = 0;
  std::string mention_id;
  std::string source;           // As submitted.
  std::string target;           // As submitted (with its fragment).
  bool reverification = false;  // The mention was VERIFIED when the job was queued.
  int attempts = 0;             // Claims so far, this one included.
};

// Failure reasons with a meaning for the stored mention: the source withdrew it (unmention, or
// the page is gone), so its content and author are cleared; for no_link the diagnostic
// `links_to_target_host` is stored.
inline constexpr char kReasonNoLink[] = "no_link";
inline constexpr char kReasonSourceGone[] = "source_gone";

// How a job ended.
struct JobResult {
  enum class Kind {
    kVerified,  // The mention is VERIFIED.
    kFailed,    // The mention is FAILED with `reason` (a permanent failure).
    kRetry,     // A transient failure: run again in `retry_in`; the mention keeps its state.
    kGiveUp,    // Transient failures exhausted the attempts: FAILED `reason`, except that a
                // VERIFIED mention stays VERIFIED (a transient error never deletes a mention).
  };
  Kind kind = Kind::kVerified;
  std::string reason;
  absl::Duration retry_in = absl::ZeroDuration();
  // For kVerified: what the source says (replaces the stored content).
  MentionContent content;
  // For kFailed "no_link": the near misses shown on the status page.
  LinkDiagnostic links_to_target_host;
};

// One outcome for JobStore::FinishBatch.
struct FinishRequest {
  int64_t job_id = 0;
  JobResult result;
};

// What JobStore::ClaimMention found.
struct MentionClaim {
  enum class Kind { kClaimed, kNoJob, kBusy };
  Kind kind = Kind::kNoJob;
  JobRecord job;  // For kClaimed.
};

// The durable verification queue (the claim side; jobs are queued by MentionStore::Submit).
// Thread-safe, blocking. Errors as MentionStore.
class JobStore {
 public:
  virtual ~JobStore() = default;

  // Leases up to `limit` due jobs (run_at passed, not leased or lease expired) to `owner` for
  // `lease`, oldest first, skipping rows other workers are claiming at this moment; counts an
  // attempt on each.
  virtual absl::StatusOr<std::vector<JobRecord>> Claim(const std::string& owner, int limit,
                                                       absl::Duration lease) = 0;

  // Extends the leases `owner` holds on `job_ids` to now + `lease`; returns how many it still
  // held. A job not listed (say, one whose outcome could not be recorded) is left to expire.
  virtual absl::StatusOr<int> RenewLeases(const std::string& owner,
                                          absl::Span<const int64_t> job_ids,
                                          absl::Duration lease) = 0;

  // Records how job `job_id` ended and removes it (or, when the mention was submitted again while
  // it ran, queues it once more), in one transaction. FAILED_PRECONDITION when `owner` no longer
  // holds the lease (another worker took the job over): nothing is written then.
  virtual absl::Status Finish(int64_t job_id, const std::string& owner,
                              const JobResult& result) = 0;

  // Records several outcomes of `owner` as Finish does, in one transaction where it can (one
  // commit, so one WAL flush, for all of them: group commit). One status per request, in order:
  // OK; FAILED_PRECONDITION for a job `owner` no longer holds (nothing written for it, the others
  // recorded all the same); another error when it could not be recorded (its lease runs out and
  // the job is claimed again). This default finishes them one by one.
  virtual std::vector<absl::Status> FinishBatch(const std::string& owner,
                                                absl::Span<const FinishRequest> requests) {
    std::vector<absl::Status> statuses;
    statuses.reserve(requests.size());
    for (const FinishRequest& request : requests) {
      statuses.push_back(Finish(request.job_id, owner, request.result));
    }
    return statuses;
  }

  // Gives leased jobs of `owner` back at once, unchanged but for the attempt already counted
  // (shutdown).
  virtual absl::Status ReleaseAll(const std::string& owner) = 0;

  // How long until the next job is due (zero when one is due now); nullopt when none is queued.
  virtual absl::StatusOr<std::optional<absl::Duration>> NextDueIn() = 0;

  // Leases the job of mention `mention_id` to `owner` for `lease` now, whether or not it is due
  // (a retry scheduled for later included), and counts an attempt: VerifyNow runs that job itself
  // and records its outcome with Finish, exactly as a worker would. kNoJob when the mention has no
  // queued job; kBusy when another owner holds a live lease on it (a worker is verifying it).
  virtual absl::StatusOr<MentionClaim> ClaimMention(const std::string& mention_id,
                                                    const std::string& owner,
                                                    absl::Duration lease) = 0;
};

// Announces that jobs were queued, so idle workers need not poll fast.
class JobNotifications {
 public:
  virtual ~JobNotifications() = default;
  // Blocks until an announcement arrives (true) or `timeout` passes (false). Called from one
  // thread only.
  virtual bool Wait(absl::Duration timeout) = 0;
};

}  // namespace portcullis::verifier::store
