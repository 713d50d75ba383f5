#include "verifier-service/src/queue/retry_policy.h"

#include <algorithm>

namespace portcullis::verifier::queue {

absl::Status RetryPolicy::Check() const {
  if (base <= absl::ZeroDuration() || cap < base || max_attempts < 1) {
    return absl::InvalidArgumentError(
        "retry policy needs 0 < base <= cap and at least one attempt");
  }
  return absl::OkStatus();
}

absl::Duration RetryDelay(const RetryPolicy& policy, int attempt, double random01) {
  absl::Duration delay = policy.base;
  for (int i = 1; i < attempt && delay < policy.cap; ++i) {
    delay *= 2;
  }
  delay = std::min(delay, policy.cap);
  random01 = std::clamp(random01, 0.0, 1.0);
  return delay / 2 + (delay / 2) * random01;
}

}  // namespace portcullis::verifier::queue
