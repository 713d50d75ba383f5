#include "verifier-service/src/store/admission_counters.h"

#include "gtest/gtest.h"

namespace portcullis::verifier::store {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000000);

TEST(VerifierAdmissionCountersTest, TheQueueLimitCountsWhatWasReadAndWhatWasAdmittedSince) {
  AdmissionCounters counters({.max_queue_length = 5, .refresh_interval = absl::Seconds(1)});
  ASSERT_TRUE(counters.ClaimQueueRefresh(kStart));
  counters.SetQueueLength(3, kStart);

  AdmissionCounters::Batch batch = counters.StartBatch();
  EXPECT_TRUE(batch.Admit("a.example").ok());
  EXPECT_TRUE(batch.Admit("b.example").ok());
  const absl::Status full = batch.Admit("c.example");
  EXPECT_EQ(full.code(), absl::StatusCode::kUnavailable) << full;
  EXPECT_EQ(full.message(), "verification queue full, retry later");
  counters.Commit(batch);

  AdmissionCounters::Batch next = counters.StartBatch();
  EXPECT_EQ(next.Admit("d.example").code(), absl::StatusCode::kUnavailable)
      << "the committed admissions count until the next read";
  counters.SetQueueLength(1, kStart + absl::Seconds(1));
  EXPECT_TRUE(counters.StartBatch().Admit("d.example").ok()) << "finished jobs show at the read";
}

TEST(VerifierAdmissionCountersTest, OneCallerPerIntervalReadsTheQueue) {
  AdmissionCounters counters({.max_queue_length = 5, .refresh_interval = absl::Seconds(1)});
  EXPECT_TRUE(counters.ClaimQueueRefresh(kStart));
  EXPECT_FALSE(counters.ClaimQueueRefresh(kStart)) << "claimed by the first";
  EXPECT_FALSE(counters.ClaimQueueRefresh(kStart + absl::Milliseconds(999)));
  EXPECT_TRUE(counters.ClaimQueueRefresh(kStart + absl::Seconds(1)));

  AdmissionCounters exact({.max_queue_length = 5, .refresh_interval = absl::ZeroDuration()});
  EXPECT_TRUE(exact.ClaimQueueRefresh(kStart));
  EXPECT_TRUE(exact.ClaimQueueRefresh(kStart)) << "zero: read before every decision";
}

TEST(VerifierAdmissionCountersTest, TheHostLimitIsPerHostAndCountsTheBatch) {
  AdmissionCounters counters(
      {.max_pending_per_source_host = 2, .refresh_interval = absl::Seconds(1)});
  EXPECT_TRUE(counters.HostStale("flood.example", kStart)) << "never read";
  counters.SetPendingOfHost("flood.example", 1, kStart);
  EXPECT_FALSE(counters.HostStale("flood.example", kStart + absl::Milliseconds(500)));
  EXPECT_TRUE(counters.HostStale("flood.example", kStart + absl::Seconds(1)));

  AdmissionCounters::Batch batch = counters.StartBatch();
  EXPECT_TRUE(batch.Admit("flood.example").ok());
  const absl::Status full = batch.Admit("flood.example");
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_TRUE(batch.Admit("other.example").ok()) << "another host has its own count";
  EXPECT_TRUE(batch.Admit("other.example").ok());
  counters.Commit(batch);
  EXPECT_EQ(counters.StartBatch().Admit("flood.example").code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(VerifierAdmissionCountersTest, HostsNotReadWithinAnIntervalAreForgotten) {
  AdmissionCounters counters(
      {.max_pending_per_source_host = 1, .refresh_interval = absl::Seconds(1)});
  counters.SetPendingOfHost("old.example", 1, kStart);
  counters.SetPendingOfHost("new.example", 1, kStart + absl::Seconds(2));
  counters.SetQueueLength(0, kStart + absl::Milliseconds(2500));
  // Forgotten: counted as zero until read again (a caller reads a stale host before deciding).
  EXPECT_TRUE(counters.StartBatch().Admit("old.example").ok());
  EXPECT_EQ(counters.StartBatch().Admit("new.example").code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(VerifierAdmissionCountersTest, NoLimitsAdmitEverything) {
  AdmissionCounters counters({});
  AdmissionCounters::Batch batch = counters.StartBatch();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(batch.Admit("flood.example").ok());
  }
}

}  // namespace
}  // namespace portcullis::verifier::store
