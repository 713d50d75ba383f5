#pragma once

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace portcullis::verifier::queue {

// When a transiently failed verification runs again, and when it stops trying.
struct RetryPolicy {
  // Delay before the second attempt; doubles with each attempt after it.
  absl::Duration base = absl::Seconds(30);
  // No delay is longer.
  absl::Duration cap = absl::Hours(1);
  // After this many attempts (claims) a transient failure is final: FAILED `unreachable`.
  int max_attempts = 8;

  // InvalidArgument unless 0 < base <= cap and max_attempts >= 1.
  absl::Status Check() const;
};

// The delay after failed attempt number `attempt` (1 for the first): min(cap, base * 2^(attempt-1))
// with "equal jitter" — half of it fixed, the other half scaled by `random01` in [0, 1) — so
// that mentions failing together (one source host down) do not retry in lockstep.
absl::Duration RetryDelay(const RetryPolicy& policy, int attempt, double random01);

}  // namespace portcullis::verifier::queue
