// The moderation RPCs' validation and mapping (issue 16), without a server: what a request may
// ask, who may ask it, and how a rule's value is stored. The store and the RPCs through the real
// binaries are tested in pg_moderation_store_test.cc and tests/integration/moderation_test.cc.
#include "verifier-service/src/server/moderation_rpcs.h"

#include "gtest/gtest.h"
#include "verifier-service/src/server/mention_rpcs.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

auth::Caller Reviewer(std::vector<std::string> sites = {}) {
  auth::Caller caller;
  caller.name = "reviewer";
  caller.scopes = static_cast<auth::ScopeSet>(auth::Scope::kReview);
  caller.sites = std::move(sites);
  return caller;
}

v1::AddApprovalRuleRequest Rule(v1::ApprovalRuleKind kind, const std::string& value,
                                const std::string& site = "bob.example") {
  v1::AddApprovalRuleRequest request;
  request.mutable_rule()->set_site(site);
  request.mutable_rule()->set_kind(kind);
  request.mutable_rule()->set_value(value);
  return request;
}

const RelayHosts kRelays = {"brid.gy", "twitter.com"};

TEST(VerifierModerationRpcTest, ReviewNeedsAUuidAKnownActionAndAShortNote) {
  v1::ReviewMentionRequest request;
  request.set_mention_id("0190b3a4-0000-7000-8000-000000000001");
  request.set_action(v1::REVIEW_ACTION_HIDE);
  request.set_note("takedown");
  absl::StatusOr<ReviewChange> change = ValidateReview(request);
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_EQ(change->action, store::ReviewAction::kHide);
  EXPECT_EQ(change->note, "takedown");

  request.set_action(v1::REVIEW_ACTION_UNSPECIFIED);
  EXPECT_EQ(ValidateReview(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_action(v1::REVIEW_ACTION_APPROVE);
  request.set_note(std::string(kMaxReviewNoteBytes + 1, 'x'));
  EXPECT_EQ(ValidateReview(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_note("");
  request.set_mention_id("not-a-uuid");
  EXPECT_EQ(ValidateReview(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VerifierModerationRpcTest, TheQueueIsVerifiedMentionsOfOneSiteInOneReviewState) {
  v1::ListReviewQueueRequest request;
  request.set_site("Bob.Example");
  absl::StatusOr<store::MentionQuery> query = ValidateReviewQueue(request, Reviewer());
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_EQ(query->domain, "bob.example");
  EXPECT_EQ(query->review, "UNREVIEWED") << "the default";
  EXPECT_EQ(query->state, store::MentionState::kVerified);
  EXPECT_FALSE(query->shown_only) << "a reviewer sees what the public does not";
  request.set_state(v1::REVIEW_STATE_HIDDEN);
  EXPECT_EQ(ValidateReviewQueue(request, Reviewer())->review, "HIDDEN");

  EXPECT_EQ(ValidateReviewQueue(request, Reviewer({"carol.example"})).status().code(),
            absl::StatusCode::kPermissionDenied);
  request.set_site("");
  EXPECT_EQ(ValidateReviewQueue(request, Reviewer()).status().code(),
            absl::StatusCode::kInvalidArgument);
  request.set_site("bob.example");
  request.set_page_token("garbage");
  EXPECT_EQ(ValidateReviewQueue(request, Reviewer()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VerifierModerationRpcTest, RulesAreNormalizedAndNeverNameABareRelay) {
  absl::StatusOr<RuleRequest> rule =
      ValidateRule(Rule(v1::APPROVAL_RULE_KIND_SOURCE_PREFIX, "https://Alice.Example/notes/"),
                   kRelays, Reviewer());
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->rule.kind, store::ApprovalRuleKind::kSourcePrefix);
  EXPECT_EQ(rule->rule.value, "https://alice.example/notes/");
  rule = ValidateRule(Rule(v1::APPROVAL_RULE_KIND_AUTHOR_URL, "https://Alice.Example"), kRelays,
                      Reviewer());
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->rule.value, "https://alice.example/");

  // A relay's bare host (or a subdomain's) would approve everyone it relays.
  for (const char* bare : {"https://brid.gy/", "https://fed.brid.gy", "https://TWITTER.com/"}) {
    absl::StatusOr<RuleRequest> refused =
        ValidateRule(Rule(v1::APPROVAL_RULE_KIND_SOURCE_PREFIX, bare), kRelays, Reviewer());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bare;
    EXPECT_NE(refused.status().message().find("relays many people"), absl::string_view::npos);
  }
  EXPECT_TRUE(ValidateRule(Rule(v1::APPROVAL_RULE_KIND_AUTHOR_URL, "https://twitter.com/alice"),
                           kRelays, Reviewer())
                  .ok())
      << "one person's path on a relay is precise";
  EXPECT_TRUE(ValidateRule(Rule(v1::APPROVAL_RULE_KIND_SOURCE_PREFIX, "https://notbrid.gy/"),
                           kRelays, Reviewer())
                  .ok())
      << "a label boundary, not a suffix";

  EXPECT_EQ(ValidateRule(Rule(v1::APPROVAL_RULE_KIND_UNSPECIFIED, "https://a.example/"), kRelays,
                         Reviewer())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRule(Rule(v1::APPROVAL_RULE_KIND_AUTHOR_URL, "javascript:alert(1)"), kRelays,
                         Reviewer())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRule(Rule(v1::APPROVAL_RULE_KIND_AUTHOR_URL, "https://u:p@a.example/"),
                         kRelays, Reviewer())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRule(Rule(v1::APPROVAL_RULE_KIND_AUTHOR_URL, "https://a.example/"), kRelays,
                         Reviewer({"carol.example"}))
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(VerifierModerationRpcTest, SiteSettingsNeedAPolicyAndMapBothWays) {
  v1::SetSiteSettingsRequest request;
  request.set_domain("bob.example");
  EXPECT_EQ(ValidateSiteSettings(request, Reviewer()).status().code(),
            absl::StatusCode::kInvalidArgument);
  request.set_moderation(v1::MODERATION_FIRST_TIME_AUTHORS);
  absl::StatusOr<SiteSettings> settings = ValidateSiteSettings(request, Reviewer());
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->change.moderation, store::Moderation::kFirstTimeAuthors);
  EXPECT_FALSE(settings->change.avatar_proxy.has_value());
  for (const auto& [name, proto] :
       std::vector<std::pair<std::string, v1::Moderation>>{
           {"off", v1::MODERATION_OFF},
           {"first-time-authors", v1::MODERATION_FIRST_TIME_AUTHORS},
           {"all", v1::MODERATION_ALL},
           {"sometimes", v1::MODERATION_UNSPECIFIED}}) {
    EXPECT_EQ(ModerationToProto(name), proto) << name;
  }
}

// Issue 17: one setting changes without resending the other.
TEST(VerifierModerationRpcTest, SiteSettingsChangeOnlyWhatIsGiven) {
  v1::SetSiteSettingsRequest request;
  request.set_domain("bob.example");
  request.set_avatar_proxy(true);
  absl::StatusOr<SiteSettings> settings = ValidateSiteSettings(request, Reviewer());
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_FALSE(settings->change.moderation.has_value());
  EXPECT_EQ(settings->change.avatar_proxy, true);
  request.set_avatar_proxy(false);
  settings = ValidateSiteSettings(request, Reviewer());
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->change.avatar_proxy, false);
  request.set_moderation(static_cast<v1::Moderation>(42));
  EXPECT_EQ(ValidateSiteSettings(request, Reviewer()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VerifierModerationRpcTest, ReadOnlyCallersReadWhatThePublicSeesAndCannotAskByReview) {
  const url::TrackingParameters tracking = url::TrackingParameters::Default();
  auth::Caller reader;
  reader.scopes = static_cast<auth::ScopeSet>(auth::Scope::kRead);
  v1::ListMentionsRequest request;
  request.set_domain("bob.example");
  absl::StatusOr<store::MentionQuery> query = Validate(request, tracking, reader);
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_TRUE(query->shown_only);
  request.set_review(v1::REVIEW_STATE_REJECTED);
  EXPECT_EQ(Validate(request, tracking, reader).status().code(),
            absl::StatusCode::kPermissionDenied);

  auth::Caller admin;
  admin.scopes = static_cast<auth::ScopeSet>(auth::Scope::kAdmin) |
                 static_cast<auth::ScopeSet>(auth::Scope::kRead);
  query = Validate(request, tracking, admin);
  ASSERT_TRUE(query.ok()) << query.status() << ": admin includes review";
  EXPECT_FALSE(query->shown_only);
  EXPECT_EQ(query->review, "REJECTED");

  // Unshown content is not read by who may not review.
  store::StoredMention hidden;
  hidden.state = store::MentionState::kVerified;
  hidden.shown = false;
  hidden.content.author_name = "Mallory";
  hidden.content.content_text = "spam";
  WithoutUnshownContent(hidden);
  EXPECT_EQ(hidden.content.author_name, "");
  EXPECT_EQ(hidden.content.content_text, "");
  store::StoredMention shown = hidden;
  shown.shown = true;
  shown.content.content_text = "fine";
  WithoutUnshownContent(shown);
  EXPECT_EQ(shown.content.content_text, "fine");
}

}  // namespace
}  // namespace portcullis::verifier::server
