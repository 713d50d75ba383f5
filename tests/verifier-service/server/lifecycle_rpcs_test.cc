// The Erase request's rules (issue 17): exactly one key, each normalized, and refusals that name
// the field.
#include "verifier-service/src/server/lifecycle_rpcs.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;
using ::testing::HasSubstr;

TEST(LifecycleRpcsTest, EachKeyIsNormalized) {
  v1::EraseRequest request;
  request.set_author_url("HTTPS://Alice.Example:443/me");
  absl::StatusOr<EraseCommand> command = ValidateErase(request);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->key.kind, store::ErasureKind::kAuthorUrl);
  EXPECT_EQ(command->key.value, "https://alice.example/me");

  request.set_source_host("Carol.EXAMPLE");
  request.set_dry_run(true);
  command = ValidateErase(request);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->key.kind, store::ErasureKind::kSourceHost);
  EXPECT_EQ(command->key.value, "carol.example");
  EXPECT_TRUE(command->dry_run);

  request.set_mention_id("0190a3c1-7b2e-7000-8000-000000000001");
  request.set_dry_run(false);
  request.set_undo(true);
  command = ValidateErase(request);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->key.kind, store::ErasureKind::kMention);
  EXPECT_TRUE(command->undo);
}

TEST(LifecycleRpcsTest, MalformedRequestsAreRefusedNamingTheField) {
  const auto refused = [](v1::EraseRequest request, const char* field) {
    absl::StatusOr<EraseCommand> command = ValidateErase(request);
    EXPECT_TRUE(absl::IsInvalidArgument(command.status())) << request.DebugString();
    EXPECT_THAT(std::string(command.status().message()), HasSubstr(field));
  };
  refused(v1::EraseRequest(), "author_url, source_host or mention_id");
  v1::EraseRequest request;
  request.set_author_url("/relative");
  refused(request, "author_url");
  request.set_author_url("ftp://alice.example/");
  refused(request, "author_url");
  request.set_author_url("https://user:pw@alice.example/");
  refused(request, "author_url");
  request.set_author_url("");
  refused(request, "author_url");
  request.set_source_host("not a host");
  refused(request, "source_host");
  request.set_source_host("*.example");
  refused(request, "source_host");
  request.set_mention_id("42");
  refused(request, "mention_id");
  request.set_mention_id("0190a3c1-7b2e-7000-8000-000000000001");
  request.set_dry_run(true);
  request.set_undo(true);
  refused(request, "dry_run and undo");
}

TEST(LifecycleRpcsTest, DropQueriesNeedAPublisherAndTakeAReasonATimeAndAPage) {
  v1::ListDropsRequest request;
  request.set_publisher("feeds.example");
  request.set_reason("invalid_provenance_signature");
  request.mutable_since()->set_seconds(1'700'000'000);
  absl::StatusOr<DropQuery> query = ValidateListDrops(request);
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->filter.publisher, "feeds.example");
  EXPECT_EQ(query->filter.reason, "invalid_provenance_signature");
  EXPECT_EQ(query->filter.since, absl::FromUnixSeconds(1'700'000'000));
  EXPECT_EQ(query->size, 100);
  EXPECT_FALSE(query->after.has_value());

  // A page token round-trips the last row's position.
  store::DroppedDeliveryRecord last;
  last.drop_id = "0190a3c1-7b2e-7000-8000-000000000001";
  last.received_at = absl::FromUnixMicros(1'700'000'000'123'456);
  request.set_page_token(DropPageToken(last));
  query = ValidateListDrops(request);
  ASSERT_TRUE(query.ok()) << query.status();
  ASSERT_TRUE(query->after.has_value());
  EXPECT_EQ(query->after->drop_id, last.drop_id);
  EXPECT_EQ(query->after->received_at, last.received_at);

  // Unset since: any time.
  v1::ReevaluateDropsRequest reevaluate;
  reevaluate.set_publisher("feeds.example");
  reevaluate.set_dry_run(true);
  absl::StatusOr<DropQuery> command = ValidateReevaluateDrops(reevaluate);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->filter.since, absl::InfinitePast());
  EXPECT_TRUE(command->filter.reason.empty());
  EXPECT_TRUE(command->dry_run);
}

TEST(LifecycleRpcsTest, MalformedDropQueriesAreRefusedNamingTheField) {
  const auto refused = [](const v1::ListDropsRequest& request, const char* field) {
    absl::StatusOr<DropQuery> query = ValidateListDrops(request);
    EXPECT_TRUE(absl::IsInvalidArgument(query.status())) << request.DebugString();
    EXPECT_THAT(std::string(query.status().message()), HasSubstr(field));
  };
  v1::ListDropsRequest request;
  refused(request, "publisher");
  request.set_publisher("feeds example");
  refused(request, "publisher");
  request.set_publisher("feeds.example");
  request.set_reason("'; DROP TABLE x");
  refused(request, "reason");
  request.set_reason(std::string(65, 'a'));
  refused(request, "reason");
  request.set_reason("");
  request.mutable_since()->set_nanos(-1);
  refused(request, "since");
  request.clear_since();
  request.set_page_size(1001);
  refused(request, "page_size");
  request.set_page_size(0);
  request.set_page_token("not-a-token");
  refused(request, "page_token");

  v1::ReevaluateDropsRequest reevaluate;
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateReevaluateDrops(reevaluate).status()));
}

TEST(LifecycleRpcsTest, ReevaluationCountsMapAsTheyAre) {
  v1::ReevaluateDropsResponse response;
  ToProto(ingest::DropReevaluation{5, 2, 3}, true, &response);
  EXPECT_EQ(response.matched(), 5);
  EXPECT_EQ(response.accepted(), 2);
  EXPECT_EQ(response.still_dropped(), 3);
  EXPECT_TRUE(response.dry_run());
}

}  // namespace
}  // namespace portcullis::verifier::server
