#include "verifier-service/src/server/public_mention_rpcs.h"

#include <string>

#include "gtest/gtest.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

const url::TrackingParameters kPublicTracking = url::TrackingParameters::Default();

auth::Caller Unbound() { return auth::Caller{}; }
auth::Caller BoundTo(const std::string& site) {
  auth::Caller caller;
  caller.sites = {site};
  return caller;
}

TEST(VerifierPublicMentionRpcTest, ListReadsWebmentionIosParameters) {
  v1::ListPublicMentionsRequest request;
  request.add_targets("http://b.example/post");
  request.add_targets("HTTPS://B.example/post#comments");
  request.set_order(v1::PUBLIC_MENTION_ORDER_UPDATED);
  request.set_ascending(true);
  request.set_page_size(50);
  request.set_page(3);
  request.add_types(v1::MENTION_TYPE_LIKE);
  request.mutable_since()->set_seconds(1714557600);
  request.set_since_id(17);
  absl::StatusOr<store::PublicMentionQuery> query =
      ValidatePublicList(request, kPublicTracking, Unbound());
  ASSERT_TRUE(query.ok()) << query.status();
  ASSERT_EQ(query->target_hashes.size(), 2u);
  EXPECT_EQ(query->target_hashes[0], crypto::Sha256("http://b.example/post"));
  EXPECT_EQ(query->target_hashes[1], crypto::Sha256("https://b.example/post"));
  EXPECT_TRUE(query->by_update);
  EXPECT_TRUE(query->ascending);
  EXPECT_EQ(query->page_size, 50);
  EXPECT_EQ(query->page, 3);
  EXPECT_EQ(query->types, std::vector<std::string>{"like"});
  EXPECT_EQ(query->since, absl::FromUnixSeconds(1714557600));
  EXPECT_EQ(query->since_id, 17);

  v1::ListPublicMentionsRequest by_domain;
  by_domain.set_domain("B.Example");
  query = ValidatePublicList(by_domain, kPublicTracking, Unbound());
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->domain, "b.example");
  EXPECT_EQ(query->page_size, store::kDefaultPublicPageSize);
  EXPECT_FALSE(query->ascending);
}

TEST(VerifierPublicMentionRpcTest, ListRefusesWhatTheProtoForbids) {
  std::vector<v1::ListPublicMentionsRequest> bad(8);
  bad[1].set_domain("b.example");
  bad[1].add_targets("https://b.example/");
  bad[2].set_domain("b.example");
  bad[2].set_page_size(101);
  bad[3].set_domain("b.example");
  bad[3].set_page(2501);  // 2501 * 20 > 50000.
  bad[4].set_domain("b.example");
  bad[4].add_types(static_cast<v1::MentionType>(42));
  bad[5].set_domain("b.example");
  bad[5].set_since_id(-1);
  for (int i = 0; i <= store::kMaxPublicTargets; ++i) {
    bad[6].add_targets("https://b.example/" + std::to_string(i));
  }
  bad[7].add_targets("ftp://b.example/");
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(ValidatePublicList(bad[i], kPublicTracking, Unbound()).status().code(),
              absl::StatusCode::kInvalidArgument)
        << i;
  }
  // Another site's token reads nothing of b.example.
  v1::ListPublicMentionsRequest other;
  other.add_targets("https://b.example/post");
  EXPECT_EQ(ValidatePublicList(other, kPublicTracking, BoundTo("c.example")).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(VerifierPublicMentionRpcTest, CountChangesAndExportHaveLimits) {
  v1::CountPublicMentionsRequest count;
  EXPECT_FALSE(ValidatePublicCount(count, kPublicTracking, Unbound()).ok());
  count.add_targets("https://b.example/post");
  EXPECT_TRUE(ValidatePublicCount(count, kPublicTracking, Unbound()).ok());
  EXPECT_EQ(ValidatePublicCount(count, kPublicTracking, BoundTo("c.example")).status().code(),
            absl::StatusCode::kPermissionDenied);

  v1::ListMentionChangesRequest changes;
  changes.set_domain("b.example");
  absl::StatusOr<ChangesQuery> changes_query = ValidateChanges(changes, Unbound());
  ASSERT_TRUE(changes_query.ok());
  EXPECT_EQ(changes_query->limit, 100);
  changes.set_limit(1001);
  EXPECT_FALSE(ValidateChanges(changes, Unbound()).ok());
  changes.set_limit(0);
  changes.set_after(std::string(65, '1'));
  EXPECT_FALSE(ValidateChanges(changes, Unbound()).ok());

  v1::ExportMentionsRequest export_request;
  export_request.set_domain("b.example");
  EXPECT_EQ(ValidateExport(export_request, Unbound())->limit, 500);
  EXPECT_EQ(ValidateExport(export_request, BoundTo("c.example")).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(VerifierPublicMentionRpcTest, ImportSanitizesWhatTheFileSays) {
  v1::ImportMentionsRequest request;
  v1::Mention* mention = request.add_mentions();
  mention->set_source("https://alice.example/reply");
  mention->set_target("https://b.example/post");
  mention->mutable_created_at()->set_seconds(1500000000);
  mention->set_type(v1::MENTION_TYPE_REPLY);
  mention->set_content_html(
      "<p onclick=\"steal()\">Hi <script>alert(1)</script><a href=\"javascript:x\">x</a></p>");
  mention->mutable_author()->set_photo("javascript:alert(1)");
  mention->mutable_author()->set_url("/me");
  v1::Mention* stranger = request.add_mentions();
  *stranger = *mention;
  stranger->set_target("not a url");
  absl::StatusOr<ImportBatch> batch = ValidateImport(request, kPublicTracking, Unbound());
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->rejected, 1);
  ASSERT_EQ(batch->mentions.size(), 1u);
  const store::ImportedMention& item = batch->mentions[0];
  EXPECT_EQ(item.state, store::MentionState::kVerified);
  EXPECT_EQ(item.received, absl::FromUnixSeconds(1500000000));
  EXPECT_EQ(item.content.type, "reply");
  EXPECT_EQ(item.content.content_html.find("script"), std::string::npos);
  EXPECT_EQ(item.content.content_html.find("onclick"), std::string::npos);
  EXPECT_EQ(item.content.content_html.find("javascript"), std::string::npos);
  EXPECT_EQ(item.content.author_photo, "");
  EXPECT_EQ(item.content.author_url, "https://alice.example/me");

  // A mention without its received time cannot keep it.
  request.mutable_mentions(0)->clear_created_at();
  EXPECT_FALSE(ValidateImport(request, kPublicTracking, Unbound()).ok());
  EXPECT_FALSE(ValidateImport(v1::ImportMentionsRequest(), kPublicTracking, Unbound()).ok());
}

}  // namespace
}  // namespace portcullis::verifier::server
