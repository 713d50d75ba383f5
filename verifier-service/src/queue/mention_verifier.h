#pragma once

#include <string>

#include "verifier-service/src/store/job_store.h"

namespace portcullis::verifier::queue {

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

  static VerificationOutcome Verified() { return {Kind::kVerified, ""}; }
  static VerificationOutcome Failed(std::string reason) {
    return {Kind::kFailed, std::move(reason)};
  }
  static VerificationOutcome Retry(std::string reason) { return {Kind::kRetry, std::move(reason)}; }
};

// Verifies one claimed job: fetches the source (through the SSRF-guarded fetcher) and looks for
// the target. Called on a worker thread; may block for as long as one verification takes (the
// worker renews the job's lease meanwhile). Must be thread-safe: workers call it concurrently.
// The implementation comes with the fetcher and verification issues; tests use doubles.
class MentionVerifier {
 public:
  virtual ~MentionVerifier() = default;
  virtual VerificationOutcome Verify(const store::JobRecord& job) = 0;
};

}  // namespace portcullis::verifier::queue
