#include "verifier-service/src/delivery/delivery_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace portcullis::verifier::delivery {

absl::Duration ScheduledDelay(int attempts, double jitter) {
  attempts = std::max(attempts, 1);
  absl::Duration delay = kFirstRetryDelay;
  for (int i = 1; i < attempts && delay < kMaxRetryDelay; ++i) {
    delay *= 3;
  }
  delay = std::min(delay, kMaxRetryDelay);
  jitter = std::clamp(jitter, -1.0, 1.0);
  return delay * (1.0 + kJitterFraction * jitter);
}

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value, absl::Time now) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty() || value.size() > 64) {
    return std::nullopt;
  }
  if (std::all_of(value.begin(), value.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    int64_t seconds = 0;
    if (value.size() > 12 || !absl::SimpleAtoi(value, &seconds)) {
      return std::nullopt;
    }
    return absl::Seconds(seconds);
  }
  // RFC 9110 §5.6.7: IMF-fixdate, then the obsolete RFC 850 and asctime forms.
  static constexpr const char* kFormats[] = {"%a, %d %b %Y %H:%M:%S GMT",
                                             "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"};
  for (const char* format : kFormats) {
    absl::Time when;
    std::string error;
    if (absl::ParseTime(format, value, absl::UTCTimeZone(), &when, &error)) {
      return when - now;
    }
  }
  return std::nullopt;
}

absl::Duration ClampRetryAfter(absl::Duration delay) {
  return std::clamp(delay, kMinRetryAfter, kMaxRetryAfter);
}

AttemptVerdict Judge(const fetch::FetchResult& result) {
  using fetch::FetchOutcome;
  AttemptVerdict verdict;
  switch (result.outcome) {
    case FetchOutcome::kOk:
      verdict.result = AttemptResult::kDelivered;
      verdict.label = "delivered";
      return verdict;
    case FetchOutcome::kGone:
      verdict.result = AttemptResult::kGone;
      verdict.label = "gone";
      return verdict;
    case FetchOutcome::kForbiddenAddress:
    case FetchOutcome::kForbiddenUrl:
    case FetchOutcome::kBadScheme:
      verdict.label = "forbidden";
      break;
    case FetchOutcome::kTooManyRedirects:
    case FetchOutcome::kBadRedirect:
      verdict.label = "redirect";
      break;
    default:
      verdict.label = std::string(fetch::FetchOutcomeName(result.outcome));
      break;
  }
  verdict.result = AttemptResult::kRetry;
  if (result.status == 0 || result.outcome == FetchOutcome::kTooManyRedirects) {
    verdict.error = absl::StrCat(fetch::FetchOutcomeName(result.outcome),
                                 result.detail.empty() ? "" : ": ", result.detail);
  }
  return verdict;
}

NextStep Decide(int attempts, const AttemptVerdict& verdict,
                const std::optional<std::string>& retry_after, absl::Time now, double jitter) {
  NextStep step;
  step.next_attempt_at = now;
  switch (verdict.result) {
    case AttemptResult::kDelivered:
      step.state = "delivered";
      return step;
    case AttemptResult::kGone:
      step.state = "failed";
      step.disable_reason = "destination answered 410 Gone";
      return step;
    case AttemptResult::kRetry:
      break;
  }
  if (attempts >= kMaxAttempts) {
    step.state = "failed";
    return step;
  }
  step.state = "pending";
  absl::Duration delay = ScheduledDelay(attempts, jitter);
  if (retry_after.has_value()) {
    if (const std::optional<absl::Duration> asked = ParseRetryAfter(*retry_after, now)) {
      delay = ClampRetryAfter(*asked);
    }
  }
  step.next_attempt_at = now + delay;
  return step;
}

}  // namespace portcullis::verifier::delivery
