#pragma once

#include <string>
#include <utility>

#include "absl/functional/any_invocable.h"

#include "verifier-service/src/store/job_store.h"

namespace portcullis::verifier::queue {

// Where verification meets the store: a verifier sees a claimed job and answers with what the
// store keeps of a verified mention, by these names (verification/ includes no store header).
using Job = store::JobRecord;
using MentionContent = store::MentionContent;
using LinkDiagnostic = store::LinkDiagnostic;
// The failure reasons the store gives a meaning to (see store/job_store.h).
using store::kReasonNoLink;
using store::kReasonSourceGone;

// What verifying one mention came to.
struct VerificationOutcome {
  enum class Kind {
    kVerified,  // The source links to the target.
    kFailed,    // Permanently not a mention (no link, 404, 410, forbidden address, ...).
    kRetry,     // Transient (5xx, 429, timeout, DNS SERVFAIL): try again later.
  };
  Kind kind = Kind::kVerified;
  // A machine-readable code for kFailed ("no_link", "gone", ...) and kRetry ("timeout", ...).
  std::string reason;
  // For kVerified: what the source says.
  MentionContent content;
  // For kFailed "no_link": links to the target's host found instead.
  LinkDiagnostic links_to_target_host;

  static VerificationOutcome Verified(MentionContent content = {}) {
    VerificationOutcome outcome;
    outcome.content = std::move(content);
    return outcome;
  }
  static VerificationOutcome Failed(std::string reason, LinkDiagnostic links = {}) {
    VerificationOutcome outcome;
    outcome.kind = Kind::kFailed;
    outcome.reason = std::move(reason);
    outcome.links_to_target_host = std::move(links);
    return outcome;
  }
  static VerificationOutcome Retry(std::string reason) {
    VerificationOutcome outcome;
    outcome.kind = Kind::kRetry;
    outcome.reason = std::move(reason);
    return outcome;
  }
};

// Verifies one claimed job: fetches the source (through the SSRF-guarded fetcher) and looks for
// the target. Called on a worker thread; may block for as long as one verification takes (the
// worker renews the job's lease meanwhile). Must be thread-safe: workers call it concurrently.
// The implementation comes with the fetcher and verification issues; tests use doubles.
class MentionVerifier {
 public:
  virtual ~MentionVerifier() = default;
  virtual VerificationOutcome Verify(const Job& job) = 0;

  using Done = absl::AnyInvocable<void(VerificationOutcome) &&>;
  // Starts verifying `job` and calls `done` exactly once with the outcome, on any thread
  // (possibly before VerifyAsync returns). An event-driven implementation holds no thread while
  // it waits for the network; this default runs Verify on the calling thread.
  virtual void VerifyAsync(const Job& job, Done done) { std::move(done)(Verify(job)); }
};

}  // namespace portcullis::verifier::queue
