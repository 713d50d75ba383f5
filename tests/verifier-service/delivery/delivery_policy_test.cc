#include "verifier-service/src/delivery/delivery_policy.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::delivery {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1764672000);  // 2025-12-02T10:40:00Z

fetch::FetchResult Answered(fetch::FetchOutcome outcome, int status,
                            std::optional<std::string> retry_after = std::nullopt) {
  fetch::FetchResult result;
  result.outcome = outcome;
  result.status = status;
  result.retry_after = std::move(retry_after);
  return result;
}

TEST(VerifierDeliveryPolicyTest, TheScheduleTriplesFromFiveSecondsToTenHoursAndSpansMoreThanADay) {
  EXPECT_EQ(ScheduledDelay(1), absl::Seconds(5));
  EXPECT_EQ(ScheduledDelay(2), absl::Seconds(15));
  EXPECT_EQ(ScheduledDelay(3), absl::Seconds(45));
  EXPECT_EQ(ScheduledDelay(7), absl::Hours(1) + absl::Seconds(45));  // 5 s × 729
  EXPECT_EQ(ScheduledDelay(10), absl::Hours(10));
  EXPECT_EQ(ScheduledDelay(100), absl::Hours(10));
  absl::Duration span;
  for (int attempts = 1; attempts < kMaxAttempts; ++attempts) {
    span += ScheduledDelay(attempts, -1);  // the shortest the jitter allows
  }
  EXPECT_GT(span, absl::Hours(24)) << span;
}

TEST(VerifierDeliveryPolicyTest, JitterIsAtMostTwentyPercentEitherWay) {
  EXPECT_EQ(ScheduledDelay(2, 1), absl::Seconds(18));
  EXPECT_EQ(ScheduledDelay(2, -1), absl::Seconds(12));
  EXPECT_EQ(ScheduledDelay(2, 5), absl::Seconds(18));  // clamped
}

TEST(VerifierDeliveryPolicyTest, RetryAfterReadsSecondsAndHttpDates) {
  EXPECT_EQ(ParseRetryAfter("2", kNow), absl::Seconds(2));
  EXPECT_EQ(ParseRetryAfter(" 120 ", kNow), absl::Seconds(120));
  EXPECT_EQ(ParseRetryAfter("Tue, 02 Dec 2025 10:41:00 GMT", kNow), absl::Seconds(60));
  EXPECT_EQ(ParseRetryAfter("Tuesday, 02-Dec-25 10:40:30 GMT", kNow), absl::Seconds(30));
  EXPECT_EQ(ParseRetryAfter("Tue Dec  2 10:40:10 2025", kNow), absl::Seconds(10));
  for (const char* bad :
       {"", "soon", "-5", "1.5", "2 s", "Tue, 02 Dec 2025 10:41:00 CET", "99999999999999999999"}) {
    EXPECT_FALSE(ParseRetryAfter(bad, kNow).has_value()) << bad;
  }
}

TEST(VerifierDeliveryPolicyTest, RetryAfterIsClampedToOneSecondAndOneDay) {
  EXPECT_EQ(ClampRetryAfter(absl::ZeroDuration()), absl::Seconds(1));
  EXPECT_EQ(ClampRetryAfter(-absl::Hours(1)), absl::Seconds(1));  // a date in the past
  EXPECT_EQ(ClampRetryAfter(absl::Seconds(2)), absl::Seconds(2));
  EXPECT_EQ(ClampRetryAfter(absl::Hours(48)), absl::Hours(24));
}

TEST(VerifierDeliveryPolicyTest, TwoXxDeliversFourTenDisablesEverythingElseRetries) {
  EXPECT_EQ(Judge(Answered(fetch::FetchOutcome::kOk, 204)).result, AttemptResult::kDelivered);
  const AttemptVerdict gone = Judge(Answered(fetch::FetchOutcome::kGone, 410));
  EXPECT_EQ(gone.result, AttemptResult::kGone);
  EXPECT_EQ(gone.label, "gone");
  for (const auto& [outcome, status, label] :
       std::vector<std::tuple<fetch::FetchOutcome, int, std::string>>{
           {fetch::FetchOutcome::kHttp5xx, 500, "http_5xx"},
           {fetch::FetchOutcome::kHttp4xx, 400, "http_4xx"},
           {fetch::FetchOutcome::kHttp429, 429, "http_429"},
           {fetch::FetchOutcome::kTimeout, 0, "timeout"},
           {fetch::FetchOutcome::kConnectionFailed, 0, "connection_failed"},
           {fetch::FetchOutcome::kForbiddenAddress, 0, "forbidden"},
           {fetch::FetchOutcome::kTooManyRedirects, 302, "redirect"}}) {
    const AttemptVerdict verdict = Judge(Answered(outcome, status));
    EXPECT_EQ(verdict.result, AttemptResult::kRetry) << label;
    EXPECT_EQ(verdict.label, label);
    EXPECT_EQ(verdict.error.empty(), status != 0 && status != 302) << label;
  }
}

TEST(VerifierDeliveryPolicyTest, DecideFollowsTheScheduleOrTheDestinationsRetryAfter) {
  const AttemptVerdict server_error = Judge(Answered(fetch::FetchOutcome::kHttp5xx, 503));
  NextStep step = Decide(1, server_error, std::nullopt, kNow, 0);
  EXPECT_EQ(step.state, "pending");
  EXPECT_EQ(step.next_attempt_at, kNow + absl::Seconds(5));
  // Shorter than the schedule's, and longer.
  step = Decide(3, server_error, std::string("2"), kNow, 0);
  EXPECT_EQ(step.next_attempt_at, kNow + absl::Seconds(2));
  step = Decide(1, server_error, std::string("3600"), kNow, 0);
  EXPECT_EQ(step.next_attempt_at, kNow + absl::Hours(1));
  step = Decide(1, server_error, std::string("0"), kNow, 0);
  EXPECT_EQ(step.next_attempt_at, kNow + absl::Seconds(1));
  step = Decide(1, server_error, std::string("604800"), kNow, 0);
  EXPECT_EQ(step.next_attempt_at, kNow + absl::Hours(24));
  // A malformed one is ignored.
  step = Decide(1, server_error, std::string("later"), kNow, 0);
  EXPECT_EQ(step.next_attempt_at, kNow + absl::Seconds(5));
}

TEST(VerifierDeliveryPolicyTest, TheLastAttemptFailsForGoodAndGoneDisables) {
  const AttemptVerdict server_error = Judge(Answered(fetch::FetchOutcome::kHttp5xx, 500));
  EXPECT_EQ(Decide(kMaxAttempts - 1, server_error, std::nullopt, kNow, 0).state, "pending");
  const NextStep last = Decide(kMaxAttempts, server_error, std::string("2"), kNow, 0);
  EXPECT_EQ(last.state, "failed");
  EXPECT_FALSE(last.disable_reason.has_value());
  const NextStep gone =
      Decide(1, Judge(Answered(fetch::FetchOutcome::kGone, 410)), std::nullopt, kNow, 0);
  EXPECT_EQ(gone.state, "failed");
  ASSERT_TRUE(gone.disable_reason.has_value());
  EXPECT_NE(gone.disable_reason->find("410"), std::string::npos);
  const NextStep ok =
      Decide(4, Judge(Answered(fetch::FetchOutcome::kOk, 200)), std::nullopt, kNow, 0);
  EXPECT_EQ(ok.state, "delivered");
}

}  // namespace
}  // namespace portcullis::verifier::delivery
