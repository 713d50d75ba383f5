#pragma once

// VerifyNow: a synchronous verification for internal callers, through the same pipeline and the
// same queue bookkeeping as the workers. After the intake (the SubmitMention rules and the same
// Submit, so the mention's lifecycle is unchanged), the caller's thread claims the mention's own
// queued job (JobStore::ClaimMention), runs the MentionVerifier on it and records the outcome with
// JobStore::Finish — exactly once, as a worker would have; a worker that holds the job at that
// moment is waited for instead (it records the outcome).

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/auth/api_token.h"
#include "verifier-service/src/queue/mention_verifier.h"
#include "verifier-service/src/queue/retry_policy.h"
#include "verifier-service/src/server/blocking_pool.h"
#include "verifier-service/src/store/job_store.h"
#include "verifier-service/src/store/mention_store.h"

namespace portcullis::verifier::server {

// What VerifyNow runs on; borrowed, they must outlive the service; every pointer is required.
struct VerifyNowBackend {
  store::JobStore* jobs = nullptr;
  queue::MentionVerifier* verifier = nullptr;
  // Threads that may block for a whole verification (a fetch takes seconds): not the database
  // pool. Full: UNAVAILABLE.
  BlockingPool* pool = nullptr;
  // The lease owner name of VerifyNow's claims, and the lease.
  std::string owner;
  absl::Duration lease = absl::Seconds(30);
  queue::RetryPolicy retry;
  // How long to wait for a worker that is verifying the same mention right now.
  absl::Duration busy_wait = absl::Seconds(10);
};

struct VerifyNowResult {
  store::StoredMention mention;
  // When this verification failed transiently (the mention stays as it was, its job queued for a
  // retry): the fetcher's reason. Empty otherwise.
  std::string transient_reason;
};

// The blocking part, after the intake accepted `mention_id`: claims its job (waiting up to
// busy_wait while a worker holds it), verifies, records, and reads the mention back (within
// `visible_sites`, the caller's binding: PERMISSION_DENIED for another site's mention). A mention
// with no queued job (FAILED within the failure retention) is read back unchanged. Its log line
// starts with `request_id`.
absl::StatusOr<VerifyNowResult> VerifyMentionNow(const VerifyNowBackend& backend,
                                                 store::MentionStore& mentions,
                                                 const std::string& mention_id,
                                                 const auth::SiteBinding& visible_sites,
                                                 absl::string_view request_id = "-");

}  // namespace portcullis::verifier::server
