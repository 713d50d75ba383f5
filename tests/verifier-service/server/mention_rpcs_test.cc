#include "verifier-service/src/server/mention_rpcs.h"

#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "verifier-service/src/store/mention_page_token.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

const url::TrackingParameters kTracking = url::TrackingParameters::Default();

v1::ListMentionsRequest ByTarget(const std::string& target) {
  v1::ListMentionsRequest request;
  request.set_target(target);
  return request;
}

TEST(VerifierMentionReadRpcTest, TargetIsMatchedByItsMentionKey) {
  absl::StatusOr<store::MentionQuery> plain = Validate(ByTarget("https://b.example/post"), kTracking);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(plain->target_hash.has_value());
  EXPECT_EQ(*plain->target_hash, crypto::Sha256("https://b.example/post"));
  EXPECT_TRUE(plain->domain.empty());
  EXPECT_EQ(plain->page_size, 100);
  // Fragment, tracking parameters, host case and default port do not make another key.
  absl::StatusOr<store::MentionQuery> spelled =
      Validate(ByTarget("HTTPS://B.example:443/post?utm_source=x#comments"), kTracking);
  ASSERT_TRUE(spelled.ok()) << spelled.status();
  EXPECT_EQ(spelled->target_hash, plain->target_hash);
}

TEST(VerifierMentionReadRpcTest, DomainIsReadAsAddSiteReadsIt) {
  v1::ListMentionsRequest request;
  request.set_domain("B.Example");
  absl::StatusOr<store::MentionQuery> query = Validate(request, kTracking);
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->domain, "b.example");
  EXPECT_FALSE(query->target_hash.has_value());
}

TEST(VerifierMentionReadRpcTest, FiltersAndPageSize) {
  v1::ListMentionsRequest request = ByTarget("https://b.example/post");
  request.set_state(v1::MENTION_STATE_VERIFIED);
  request.set_type(v1::MENTION_TYPE_REPOST);
  request.set_page_size(1000);
  absl::StatusOr<store::MentionQuery> query = Validate(request, kTracking);
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->state, store::MentionState::kVerified);
  EXPECT_EQ(query->type, "repost");
  EXPECT_EQ(query->page_size, 1000);
  request.set_page_token(store::EncodeMentionPageToken(
      {absl::FromUnixMicros(5), "0f8fad5b-d9cb-469f-a165-70867728950e"}));
  EXPECT_EQ(Validate(request, kTracking)->page_token, request.page_token());
}

TEST(VerifierMentionReadRpcTest, RejectsWhatTheProtoForbids) {
  std::vector<v1::ListMentionsRequest> bad;
  bad.emplace_back();  // Neither.
  v1::ListMentionsRequest both = ByTarget("https://b.example/");
  both.set_domain("b.example");
  bad.push_back(both);
  bad.push_back(ByTarget("https://b.example/" + std::string(2048, 'a')));
  bad.push_back(ByTarget("ftp://b.example/"));
  bad.push_back(ByTarget("/relative"));
  bad.push_back(ByTarget("https://user:pw@b.example/"));
  bad.push_back(ByTarget("https://b.example/a b"));
  v1::ListMentionsRequest bad_domain;
  bad_domain.set_domain("https://b.example/");
  bad.push_back(bad_domain);
  for (const int size : {-1, 1001}) {
    v1::ListMentionsRequest request = ByTarget("https://b.example/");
    request.set_page_size(size);
    bad.push_back(request);
  }
  v1::ListMentionsRequest bad_state = ByTarget("https://b.example/");
  bad_state.set_state(static_cast<v1::MentionState>(42));
  bad.push_back(bad_state);
  v1::ListMentionsRequest bad_type = ByTarget("https://b.example/");
  bad_type.set_type(static_cast<v1::MentionType>(42));
  bad.push_back(bad_type);
  v1::ListMentionsRequest bad_token = ByTarget("https://b.example/");
  bad_token.set_page_token("not-a-token");
  bad.push_back(bad_token);
  for (const v1::ListMentionsRequest& request : bad) {
    EXPECT_TRUE(absl::IsInvalidArgument(Validate(request, kTracking).status()))
        << request.ShortDebugString();
  }
}

TEST(VerifierMentionReadRpcTest, TypeNamesRoundTrip) {
  for (const v1::MentionType type :
       {v1::MENTION_TYPE_MENTION, v1::MENTION_TYPE_REPLY, v1::MENTION_TYPE_LIKE,
        v1::MENTION_TYPE_REPOST, v1::MENTION_TYPE_BOOKMARK, v1::MENTION_TYPE_RSVP}) {
    EXPECT_EQ(TypeOf(TypeName(type)), type);
  }
  EXPECT_EQ(TypeName(v1::MENTION_TYPE_UNSPECIFIED), "");
  EXPECT_EQ(TypeOf(""), v1::MENTION_TYPE_UNSPECIFIED);
  EXPECT_EQ(TypeOf("reply"), v1::MENTION_TYPE_REPLY);
}

TEST(VerifierMentionReadRpcTest, ToProtoFillsEveryField) {
  store::StoredMention mention;
  mention.mention_id = "0f8fad5b-d9cb-469f-a165-70867728950e";
  mention.source = "https://a.example/r";
  mention.target = "https://b.example/p#c";
  mention.state = store::MentionState::kVerified;
  mention.created_at = absl::FromUnixSeconds(100);
  mention.updated_at = absl::FromUnixSeconds(200);
  mention.verified_at = absl::FromUnixSeconds(150);
  mention.attempts = 2;
  mention.content.type = "rsvp";
  mention.content.rsvp = "yes";
  mention.content.author_name = "Alice";
  mention.content.author_url = "https://a.example/";
  mention.content.author_photo = "https://a.example/a.jpg";
  mention.content.author_note = "Hi";
  mention.content.name = "Going";
  mention.content.published = "2024-05-01";
  mention.content.url = "https://a.example/r";
  mention.content.content_text = "I'll be there";
  mention.content.content_html = "<p>I'll be there</p>";
  mention.content.content_truncated = true;
  v1::Mention out;
  ToProto(mention, &out);
  EXPECT_EQ(out.mention_id(), mention.mention_id);
  EXPECT_EQ(out.target(), "https://b.example/p#c");
  EXPECT_EQ(out.state(), v1::MENTION_STATE_VERIFIED);
  EXPECT_EQ(out.type(), v1::MENTION_TYPE_RSVP);
  EXPECT_EQ(out.rsvp(), "yes");
  EXPECT_EQ(out.author().name(), "Alice");
  EXPECT_EQ(out.author().url(), "https://a.example/");
  EXPECT_EQ(out.author().photo(), "https://a.example/a.jpg");
  EXPECT_EQ(out.author().note(), "Hi");
  EXPECT_EQ(out.name(), "Going");
  EXPECT_EQ(out.published(), "2024-05-01");
  EXPECT_EQ(out.url(), "https://a.example/r");
  EXPECT_EQ(out.content_text(), "I'll be there");
  EXPECT_EQ(out.content_html(), "<p>I'll be there</p>");
  EXPECT_TRUE(out.content_truncated());
  EXPECT_EQ(out.verified_at().seconds(), 150);
  EXPECT_EQ(out.created_at().seconds(), 100);
  EXPECT_EQ(out.updated_at().seconds(), 200);
  EXPECT_EQ(out.attempts(), 2);

  store::StoredMention failed;
  failed.state = store::MentionState::kFailed;
  failed.reason = "no_link";
  failed.links_to_target_host = {"https://b.example/p-10"};
  v1::Mention failed_out;
  ToProto(failed, &failed_out);
  EXPECT_EQ(failed_out.type(), v1::MENTION_TYPE_UNSPECIFIED);
  EXPECT_FALSE(failed_out.has_author());
  EXPECT_FALSE(failed_out.has_verified_at());
  ASSERT_EQ(failed_out.links_to_target_host_size(), 1);
  EXPECT_EQ(failed_out.links_to_target_host(0), "https://b.example/p-10");
}

v1::SubmitMentionsItem* AddItem(v1::SubmitMentionsRequest& request, const std::string& request_id,
                                const std::string& source, const std::string& target) {
  v1::SubmitMentionsItem* item = request.add_items();
  item->set_request_id(request_id);
  item->mutable_mention()->set_source(source);
  item->mutable_mention()->set_target(target);
  return item;
}

TEST(VerifierSubmitMentionsValidationTest, EachItemIsJudgedAloneAndKeepsItsOwnVerdict) {
  auth::Caller bound;
  bound.sites = {"b.example"};
  v1::SubmitMentionsRequest request;
  AddItem(request, "req-1", "https://a.example/1", "https://b.example/post");
  AddItem(request, "req 2", "ftp://a.example/", "https://b.example/post");  // Rejected.
  AddItem(request, "", "https://a.example/3", "https://c.example/post");   // Another site.
  absl::StatusOr<std::vector<SubmissionItem>> items =
      ValidateSubmissions(request, kTracking, bound);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 3u);

  EXPECT_EQ((*items)[0].request_id, "req-1");
  ASSERT_TRUE((*items)[0].verdict.ok());
  ASSERT_TRUE(std::holds_alternative<store::NewMention>(*(*items)[0].verdict));
  EXPECT_EQ(std::get<store::NewMention>(*(*items)[0].verdict).target_domain, "b.example");

  EXPECT_EQ((*items)[1].request_id, "") << "an id that breaks the x-request-id rules is dropped";
  ASSERT_TRUE((*items)[1].verdict.ok());
  ASSERT_TRUE(std::holds_alternative<intake::Rejection>(*(*items)[1].verdict));
  EXPECT_EQ(std::get<intake::Rejection>(*(*items)[1].verdict).reason, "unsupported_scheme");

  EXPECT_EQ((*items)[2].verdict.status().code(), absl::StatusCode::kPermissionDenied)
      << "a target outside the token's binding refuses that item, not the call";
}

TEST(VerifierSubmitMentionsValidationTest, ACallHoldsOneTo256Items) {
  v1::SubmitMentionsRequest request;
  EXPECT_EQ(ValidateSubmissions(request, kTracking, auth::Caller()).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (int i = 0; i < kMaxBatchItems; ++i) {
    AddItem(request, "", "https://a.example/" + std::to_string(i), "https://b.example/");
  }
  EXPECT_TRUE(ValidateSubmissions(request, kTracking, auth::Caller()).ok());
  AddItem(request, "", "https://a.example/one-more", "https://b.example/");
  const absl::Status too_many = ValidateSubmissions(request, kTracking, auth::Caller()).status();
  EXPECT_EQ(too_many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(too_many.message(), "items must hold 1 to 256 items");
}

}  // namespace
}  // namespace portcullis::verifier::server
