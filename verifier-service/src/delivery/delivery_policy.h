#pragma once

// How an outbound delivery's attempt is judged and when the next one goes (issue 20). Pure: the
// worker hands in what the attempt returned, the time and a jitter draw.
//
// The retry schedule (after the Nth failed attempt, N = 1, 2, …): 5 s × 3^(N-1), at most 10 h,
// each ±20 % jitter — 5 s, 15 s, 45 s, 2 m 15 s, 6 m 45 s, 20 m, 1 h, 3 h, 9 h, 10 h, 10 h — so
// kMaxAttempts (12) attempts span about 34 hours (at least a day). A Retry-After from the
// destination (seconds or an HTTP date) replaces the schedule's delay for that attempt, clamped
// to [1 s, 1 day]. 2xx ends it (delivered); 410 disables the subscription; any other answer or
// failure (4xx, 5xx, timeout, refused connection, a forbidden address) is retried until the
// schedule runs out (failed).

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/fetch/safe_fetcher.h"

namespace portcullis::verifier::delivery {

inline constexpr int kMaxAttempts = 12;
inline constexpr absl::Duration kFirstRetryDelay = absl::Seconds(5);
inline constexpr absl::Duration kMaxRetryDelay = absl::Hours(10);
inline constexpr double kJitterFraction = 0.2;
inline constexpr absl::Duration kMinRetryAfter = absl::Seconds(1);
inline constexpr absl::Duration kMaxRetryAfter = absl::Hours(24);

// The delay after `attempts` failed attempts (>= 1), before jitter: 5 s × 3^(attempts-1) capped
// at 10 h. `jitter` in [-1, 1] scales it by (1 + 0.2 × jitter).
absl::Duration ScheduledDelay(int attempts, double jitter = 0);

// A Retry-After value: whole seconds ("120") or an HTTP date (IMF-fixdate, "Wed, 21 Oct 2026
// 07:28:00 GMT"; also RFC 850 and asctime forms) made relative to `now`. nullopt when malformed.
// Not clamped.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now);

// `delay` clamped to [1 s, 1 day].
absl::Duration ClampRetryAfter(absl::Duration delay);

// What one attempt says.
enum class AttemptResult {
  kDelivered,  // 2xx
  kGone,       // 410: the destination asks us to stop; the subscription is disabled
  kRetry,      // anything else
};

struct AttemptVerdict {
  AttemptResult result = AttemptResult::kRetry;
  // The metric label: "delivered", "gone", "http_4xx", "http_5xx", "http_429", "timeout",
  // "connection_failed", "forbidden", ...
  std::string label;
  // For a failure without a status: FetchOutcomeName and detail (never the body).
  std::string error;
};

AttemptVerdict Judge(const fetch::FetchResult& result);

// Where the delivery goes after an attempt.
struct NextStep {
  // "delivered", "pending" (sent again at next_attempt_at) or "failed" (the schedule ran out, or
  // the subscription was disabled).
  std::string state;
  absl::Time next_attempt_at;
  // Set when the subscription is to be disabled (410), with the reason it shows.
  std::optional<std::string> disable_reason;
};

// The step after attempt number `attempts` (counting this one) judged `verdict`, with the
// response's Retry-After (as sent, if any), at `now`; `jitter` in [-1, 1].
NextStep Decide(int attempts, const AttemptVerdict& verdict,
                const std::optional<std::string>& retry_after, absl::Time now, double jitter);

}  // namespace portcullis::verifier::delivery
