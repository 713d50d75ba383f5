// Moderation (issue 16) against a real PostgreSQL: review states, policies, approval rules and
// blocks as the public read side (MentionStore::List with shown_only, Mention.shown) sees them,
// and re-verification keeping or dropping an approval by the content hash.
#include "verifier-service/src/store/pg_moderation_store.h"

#include <set>

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_blocklist_store.h"
#include "verifier-service/src/store/pg_job_store.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgModerationStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    mentions_ = std::make_unique<PgMentionStore>(*pool_);
    moderation_ = std::make_unique<PgModerationStore>(*pool_);
    blocks_ = std::make_unique<PgBlocklistStore>(*pool_);
    jobs_ = std::make_unique<PgJobStore>(*pool_);
    sites_ = std::make_unique<PgSiteStore>(*pool_);
    for (const char* site : {"b.example", "c.example"}) {
      ASSERT_TRUE(sites_->AddSite(site, {}).ok());
      const TargetRule everything{absl::StrCat("https://", site, "/"), TargetKind::kPrefix, site};
      ASSERT_TRUE(sites_->AddTargets(absl::MakeConstSpan(&everything, 1), {}).ok());
    }
  }

  static MentionContent Content(const std::string& author_url, const std::string& text) {
    MentionContent content;
    content.type = "reply";
    content.author_name = "Someone";
    content.author_url = author_url;
    content.content_text = text;
    content.content_html = absl::StrCat("<p>", text, "</p>");
    return content;
  }

  // Submits `source` → `target` (both normalized) and verifies it with `content` through the
  // job store, as a worker would; returns the mention id.
  std::string Verify(const std::string& source, const std::string& target,
                     const MentionContent& content) {
    absl::string_view host = target;
    host.remove_prefix(host.find("//") + 2);
    host = host.substr(0, host.find_first_of(":/"));
    absl::StatusOr<SubmitResult> submitted = mentions_->Submit(
        {source, target, crypto::Sha256(source), crypto::Sha256(target), std::string(host),
         target, source});
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    if (!submitted.ok()) {
      return "";
    }
    absl::StatusOr<std::vector<JobRecord>> claimed = jobs_->Claim("w", 1, absl::Seconds(30));
    EXPECT_TRUE(claimed.ok() && claimed->size() == 1);
    if (!claimed.ok() || claimed->empty()) {
      return submitted->mention_id;
    }
    JobResult result;
    result.kind = JobResult::Kind::kVerified;
    result.content = content;
    EXPECT_TRUE(jobs_->Finish((*claimed)[0].job_id, "w", result).ok());
    return submitted->mention_id;
  }

  // The ids the public sees on `site`, and (checked to agree) those whose Get says `shown`.
  std::set<std::string> Public(const std::string& site) {
    MentionQuery query;
    query.domain = site;
    query.state = MentionState::kVerified;
    query.shown_only = true;
    absl::StatusOr<MentionPage> page = mentions_->List(query, {});
    EXPECT_TRUE(page.ok()) << page.status();
    std::set<std::string> ids;
    for (const StoredMention& mention : page.ok() ? page->mentions : std::vector<StoredMention>()) {
      EXPECT_TRUE(mention.shown);
      ids.insert(mention.mention_id);
    }
    MentionQuery all;
    all.domain = site;
    absl::StatusOr<MentionPage> every = mentions_->List(all, {});
    EXPECT_TRUE(every.ok()) << every.status();
    for (const StoredMention& mention : every.ok() ? every->mentions : std::vector<StoredMention>()) {
      EXPECT_EQ(mention.shown, ids.count(mention.mention_id) == 1) << mention.mention_id;
    }
    return ids;
  }

  StoredMention Get(const std::string& id) {
    absl::StatusOr<StoredMention> mention = mentions_->Get(id, {});
    EXPECT_TRUE(mention.ok()) << mention.status();
    return mention.ok() ? *mention : StoredMention();
  }

  void Review(const std::string& id, ReviewAction action, const std::string& note = "") {
    const absl::Status status = moderation_->Review(id, action, note, "tester", {});
    ASSERT_TRUE(status.ok()) << status;
  }

  void SetPolicy(const std::string& site, Moderation moderation) {
    absl::StatusOr<SiteRecord> set = moderation_->SetModeration(site, moderation, {});
    ASSERT_TRUE(set.ok()) << set.status();
    EXPECT_EQ(set->moderation, ModerationName(moderation));
  }

  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgMentionStore> mentions_;
  std::unique_ptr<PgModerationStore> moderation_;
  std::unique_ptr<PgBlocklistStore> blocks_;
  std::unique_ptr<PgJobStore> jobs_;
  std::unique_ptr<PgSiteStore> sites_;
};

using Ids = std::set<std::string>;

TEST_F(VerifierPgModerationStoreTest, PolicyOffShowsEveryVerifiedMentionAsBefore) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string a = Verify("https://a.example/1", "https://b.example/post",
                               Content("https://a.example/", "one"));
  const std::string b = Verify("https://z.example/2", "https://b.example/post",
                               Content("https://z.example/", "two"));
  EXPECT_EQ(Public("b.example"), (Ids{a, b}));
  EXPECT_EQ(Get(a).review, "UNREVIEWED");
  absl::StatusOr<std::vector<SiteRecord>> sites = sites_->ListSites("", 10, {});
  ASSERT_TRUE(sites.ok());
  EXPECT_EQ(sites->front().moderation, "off") << "the default of every site";
}

TEST_F(VerifierPgModerationStoreTest, HideAndBlocksTakeEffectOnTheNextReadAndAreUndone) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string spam = Verify("https://x.spam.example/1", "https://b.example/post",
                                  Content("https://spam.example/", "buy"));
  const std::string bridged = Verify("https://relay.example/~mallory/9", "https://b.example/post",
                                     Content("https://relay.example/~mallory", "hi"));
  const std::string good = Verify("https://a.example/1", "https://b.example/post",
                                  Content("https://a.example/", "kind words"));
  ASSERT_EQ(Public("b.example"), (Ids{spam, bridged, good}));

  // A global domain block (subdomains included) and a site prefix block: gone at once, without
  // a re-send, and the rows are untouched (still VERIFIED).
  ASSERT_TRUE(*blocks_->AddBlock({"", BlockKind::kDomain, "spam.example"}, {}));
  ASSERT_TRUE(*blocks_->AddBlock({"b.example", BlockKind::kPrefix, "https://relay.example/~mallory/"}, {}));
  EXPECT_EQ(Public("b.example"), (Ids{good}));
  EXPECT_EQ(Get(spam).state, MentionState::kVerified);

  // Hidden by hand while blocked: removing the blocks brings back only what was not hidden.
  Review(spam, ReviewAction::kHide, "scam");
  ASSERT_TRUE(*blocks_->RemoveBlock({"", BlockKind::kDomain, "spam.example"}, {}));
  ASSERT_TRUE(*blocks_->RemoveBlock({"b.example", BlockKind::kPrefix, "https://relay.example/~mallory/"}, {}));
  EXPECT_EQ(Public("b.example"), (Ids{bridged, good}));
  EXPECT_EQ(Get(spam).review, "HIDDEN");
  EXPECT_EQ(Get(spam).review_note, "scam");

  // A block of another site does not reach this one.
  ASSERT_TRUE(*blocks_->AddBlock({"c.example", BlockKind::kDomain, "a.example"}, {}));
  EXPECT_EQ(Public("b.example"), (Ids{bridged, good}));

  // Unhide restores the state it had before the hide.
  Review(spam, ReviewAction::kUnhide);
  EXPECT_EQ(Get(spam).review, "UNREVIEWED");
  EXPECT_EQ(Public("b.example"), (Ids{spam, bridged, good}));
}

TEST_F(VerifierPgModerationStoreTest, PolicyAllShowsOnlyApprovedAndUnhideRestoresApproval) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  SetPolicy("b.example", Moderation::kAll);
  const std::string a = Verify("https://a.example/1", "https://b.example/post",
                               Content("https://a.example/", "one"));
  const std::string z = Verify("https://z.example/2", "https://b.example/post",
                               Content("https://z.example/", "two"));
  const std::string other = Verify("https://z.example/3", "https://c.example/post",
                                   Content("https://z.example/", "elsewhere"));
  EXPECT_EQ(Public("b.example"), Ids{});
  EXPECT_EQ(Public("c.example"), (Ids{other})) << "another site's policy is its own";
  Review(a, ReviewAction::kApprove, "fine");
  Review(z, ReviewAction::kReject);
  EXPECT_EQ(Public("b.example"), (Ids{a}));
  EXPECT_EQ(Get(a).review, "APPROVED");
  EXPECT_TRUE(Get(a).reviewed_at.has_value());

  // The queue: what is waiting, by review state.
  MentionQuery queue;
  queue.domain = "b.example";
  queue.review = "REJECTED";
  absl::StatusOr<MentionPage> rejected = mentions_->List(queue, {});
  ASSERT_TRUE(rejected.ok());
  ASSERT_EQ(rejected->mentions.size(), 1u);
  EXPECT_EQ(rejected->mentions[0].mention_id, z);

  Review(a, ReviewAction::kHide);
  EXPECT_EQ(Public("b.example"), Ids{});
  Review(a, ReviewAction::kUnhide);
  EXPECT_EQ(Get(a).review, "APPROVED");
  EXPECT_EQ(Public("b.example"), (Ids{a}));

  // Back to off: every VERIFIED mention not rejected or hidden.
  SetPolicy("b.example", Moderation::kOff);
  EXPECT_EQ(Public("b.example"), (Ids{a}));
  Review(z, ReviewAction::kApprove);
  EXPECT_EQ(Public("b.example"), (Ids{a, z}));
}

TEST_F(VerifierPgModerationStoreTest, FirstTimeAuthorsAreShownOnceAnEarlierMentionWasApproved) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  SetPolicy("b.example", Moderation::kFirstTimeAuthors);
  const std::string first = Verify("https://a.example/1", "https://b.example/post",
                                   Content("https://a.example/", "hello"));
  const std::string second = Verify("https://a.example/2", "https://b.example/post",
                                    Content("https://a.example/", "again"));
  const std::string stranger = Verify("https://z.example/1", "https://b.example/post",
                                      Content("https://z.example/", "new here"));
  EXPECT_EQ(Public("b.example"), Ids{});
  Review(first, ReviewAction::kApprove);
  EXPECT_EQ(Public("b.example"), (Ids{first, second}));
  // An approval on another site does not vouch for the author here.
  const std::string elsewhere = Verify("https://z.example/2", "https://c.example/post",
                                       Content("https://z.example/", "there"));
  SetPolicy("c.example", Moderation::kFirstTimeAuthors);
  Review(elsewhere, ReviewAction::kApprove);
  EXPECT_EQ(Public("b.example"), (Ids{first, second}));
  EXPECT_FALSE(Get(stranger).shown);
}

TEST_F(VerifierPgModerationStoreTest, RulesShowTheirReachApproveAndRemovingKeepsHandApprovals) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  SetPolicy("b.example", Moderation::kAll);
  const std::string one = Verify("https://a.example/notes/1", "https://b.example/post",
                                 Content("https://a.example/", "one"));
  const std::string two = Verify("https://a.example/notes/2", "https://b.example/post",
                                 Content("https://a.example/", "two"));
  const std::string other = Verify("https://a.example/other", "https://b.example/post",
                                   Content("https://z.example/", "guest post"));
  const ApprovalRuleRecord prefix{"", "b.example", ApprovalRuleKind::kSourcePrefix,
                                  "https://a.example/notes/", absl::Time()};

  absl::StatusOr<AddApprovalRuleResult> dry = moderation_->AddRule(prefix, true, {});
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->reach, 2);
  EXPECT_FALSE(dry->created);
  EXPECT_TRUE(moderation_->ListRules("b.example", {})->empty()) << "a dry run stores nothing";
  EXPECT_EQ(Public("b.example"), Ids{});

  absl::StatusOr<AddApprovalRuleResult> added = moderation_->AddRule(prefix, false, {});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(added->created);
  EXPECT_EQ(added->reach, 2);
  EXPECT_EQ(Public("b.example"), (Ids{one, two}));
  EXPECT_FALSE(moderation_->AddRule(prefix, false, {})->created) << "idempotent";

  const ApprovalRuleRecord author{"", "b.example", ApprovalRuleKind::kAuthorUrl,
                                  "https://z.example/", absl::Time()};
  absl::StatusOr<AddApprovalRuleResult> by_author = moderation_->AddRule(author, false, {});
  ASSERT_TRUE(by_author.ok());
  EXPECT_EQ(by_author->reach, 1);
  EXPECT_EQ(Public("b.example"), (Ids{one, two, other}));
  absl::StatusOr<std::vector<ApprovalRuleRecord>> rules = moderation_->ListRules("b.example", {});
  ASSERT_TRUE(rules.ok());
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[0].value, "https://a.example/notes/");

  // A person approves one; removing the rule takes back only what the rule approved.
  Review(one, ReviewAction::kApprove);
  absl::StatusOr<ApprovalRuleRecord> removed = moderation_->RemoveRule(added->rule.rule_id, {});
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->value, "https://a.example/notes/");
  EXPECT_EQ(Public("b.example"), (Ids{one, other}));
  EXPECT_EQ(moderation_->RemoveRule(added->rule.rule_id, {}).status().code(),
            absl::StatusCode::kNotFound);
  // A rejected mention stays out whatever rule matches it.
  Review(other, ReviewAction::kReject);
  EXPECT_EQ(Public("b.example"), (Ids{one}));
}

TEST_F(VerifierPgModerationStoreTest, ReverificationKeepsApprovalUnlessTheContentChangedUnderAll) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  SetPolicy("b.example", Moderation::kAll);
  const std::string id = Verify("https://a.example/1", "https://b.example/post",
                                Content("https://a.example/", "same"));
  Review(id, ReviewAction::kApprove);
  // Sent again, same content: still approved and shown.
  EXPECT_EQ(Verify("https://a.example/1", "https://b.example/post",
                   Content("https://a.example/", "same")),
            id);
  EXPECT_EQ(Get(id).review, "APPROVED");
  EXPECT_EQ(Public("b.example"), (Ids{id}));
  // Edited: back to UNREVIEWED, saying why, and out of the feed until approved again.
  Verify("https://a.example/1", "https://b.example/post",
         Content("https://a.example/", "edited to sell pills"));
  EXPECT_EQ(Get(id).review, "UNREVIEWED");
  EXPECT_EQ(Get(id).review_reason, "content_changed");
  EXPECT_EQ(Public("b.example"), Ids{});

  // Under `off` an edit changes nothing a reviewer decided.
  const std::string c = Verify("https://a.example/1", "https://c.example/post",
                               Content("https://a.example/", "first"));
  Review(c, ReviewAction::kReject);
  Verify("https://a.example/1", "https://c.example/post", Content("https://a.example/", "second"));
  EXPECT_EQ(Get(c).review, "REJECTED");
}

TEST_F(VerifierPgModerationStoreTest, ABoundCallerReviewsOnlyItsSites) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string id = Verify("https://a.example/1", "https://b.example/post",
                                Content("https://a.example/", "one"));
  EXPECT_EQ(moderation_->Review(id, ReviewAction::kHide, "", "t", {"c.example"}).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Get(id).review, "UNREVIEWED") << "nothing changed";
  EXPECT_EQ(moderation_->Review("00000000-0000-0000-0000-000000000000", ReviewAction::kHide, "",
                                "t", {})
                .code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(moderation_->SetModeration("b.example", Moderation::kAll, {"c.example"}).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(moderation_->SetModeration("nope.example", Moderation::kAll, {}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(moderation_->ListRules("b.example", {"c.example"}).status().code(),
            absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace portcullis::verifier::store
