// PgMentionStore's admission limits (SubmitLimits) on a real PostgreSQL.
#include "gtest/gtest.h"
#include "tests/support/test_database.h"
#include "tests/verifier-service/store/served_site_fixture.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgMentionLimitsTest : public ServedSiteStoreTest {
 protected:
  absl::StatusOr<SubmitResult> Submit(const std::string& source) {
    return store_->Submit(Mention(source));
  }
};

TEST_F(VerifierPgMentionLimitsTest, PendingPerSourceHostIsRefusedRetryablyAndStoresNothing) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string(),
       {.max_pending_per_source_host = 2, .refresh_interval = absl::ZeroDuration()});
  ASSERT_TRUE(Submit("https://flood.example/1").ok());
  ASSERT_TRUE(Submit("https://a.flood.example/2").ok()) << "another host";
  ASSERT_TRUE(Submit("https://flood.example/3").ok());
  absl::StatusOr<SubmitResult> third = Submit("https://flood.example/4");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted) << third.status();
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 3) << "the refused one was not stored";
  // A repeat of a pair already PENDING is never refused; another host is not limited.
  EXPECT_TRUE(Submit("https://flood.example/1").ok());
  EXPECT_TRUE(Submit("https://other.example/1").ok());
  // Once one is decided, there is room again.
  Count("UPDATE mentions SET state = 'VERIFIED' WHERE source = 'https://flood.example/1' "
        "RETURNING 1");
  EXPECT_TRUE(Submit("https://flood.example/4").ok());
}

TEST_F(VerifierPgMentionLimitsTest, FullQueueIsUnavailableAndLosesNothingAccepted) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string(), {.max_queue_length = 3, .refresh_interval = absl::ZeroDuration()});
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<SubmitResult> accepted = Submit("https://s" + std::to_string(i) + ".example/");
    ASSERT_TRUE(accepted.ok()) << accepted.status();
    EXPECT_TRUE(accepted->queued);
  }
  absl::StatusOr<SubmitResult> refused = Submit("https://s9.example/");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM verification_jobs"), 3) << "every acceptance has its job";
  Count("DELETE FROM verification_jobs WHERE id = (SELECT min(id) FROM verification_jobs) "
        "RETURNING 1");
  EXPECT_TRUE(Submit("https://s9.example/").ok()) << "room again";
}

TEST_F(VerifierPgMentionLimitsTest, CountsReadOncePerIntervalStillHoldTheLimitsOfThisProcess) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string(), {.max_pending_per_source_host = 2,
                                 .max_queue_length = 4,
                                 .refresh_interval = absl::Hours(1)});
  // Read once, then raised by this store's own acceptances: no row is counted per submission.
  ASSERT_TRUE(Submit("https://flood.example/1").ok());
  ASSERT_TRUE(Submit("https://flood.example/2").ok());
  EXPECT_EQ(Submit("https://flood.example/3").status().code(),
            absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(Submit("https://s1.example/").ok());
  ASSERT_TRUE(Submit("https://s2.example/").ok());
  EXPECT_EQ(Submit("https://s3.example/").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Count("SELECT count(*) FROM mentions"), 4);
  // Work finished since the last read is seen at the next one, not before.
  Count("WITH d AS (DELETE FROM verification_jobs RETURNING 1) SELECT count(*) FROM d");
  EXPECT_EQ(Submit("https://s3.example/").status().code(), absl::StatusCode::kUnavailable)
      << "within the interval the count read stands";
}

}  // namespace
}  // namespace portcullis::verifier::store
