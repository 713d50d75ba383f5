#include "verifier-service/src/store/pg_blocklist_store.h"

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgBlocklistStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    url_ = url;
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    mentions_ = std::make_unique<PgMentionStore>(*pool_);
    blocks_ = std::make_unique<PgBlocklistStore>(*pool_);
    sites_ = std::make_unique<PgSiteStore>(*pool_);
    for (const char* site : {"b.example", "c.example"}) {
      ASSERT_TRUE(sites_->AddSite(site, {}).ok());
      const TargetRule everything{absl::StrCat("https://", site, "/"), TargetKind::kPrefix, site};
      ASSERT_TRUE(sites_->AddTargets(absl::MakeConstSpan(&everything, 1), {}).ok());
    }
  }

  // `source` and `target` already normalized.
  static NewMention Mention(const std::string& source, const std::string& target) {
    absl::string_view host = target;
    host.remove_prefix(host.find("//") + 2);
    host = host.substr(0, host.find_first_of(":/"));
    return {source, target, crypto::Sha256(source), crypto::Sha256(target), std::string(host),
            target, source};
  }

  void Block(const std::string& site, BlockKind kind, const std::string& value) {
    absl::StatusOr<bool> added = blocks_->AddBlock({site, kind, value}, {});
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_TRUE(*added);
  }

  // The state, reason and whether a job is queued, of the pair, after submitting it.
  struct Outcome {
    MentionState state;
    std::string reason;
    int jobs;
  };
  Outcome Submit(const std::string& source, const std::string& target) {
    absl::StatusOr<SubmitResult> result = mentions_->Submit(Mention(source, target));
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) {
      return {MentionState::kPending, "error", -1};
    }
    EXPECT_EQ(result->target, TargetMatch::kServed);
    absl::StatusOr<StoredMention> stored = mentions_->Get(result->mention_id, {});
    EXPECT_TRUE(stored.ok()) << stored.status();
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    const int jobs = transaction
                         .exec_params1("SELECT count(*) FROM verification_jobs "
                                       "WHERE mention_id = $1::uuid",
                                       result->mention_id)[0]
                         .as<int>();
    EXPECT_EQ(result->state, stored->state);
    EXPECT_EQ(result->queued, jobs == 1 && stored->state == MentionState::kPending);
    return {stored->state, stored->reason, jobs};
  }

  bool Blocked(const std::string& source, const std::string& target) {
    const Outcome outcome = Submit(source, target);
    if (outcome.state == MentionState::kFailed && outcome.reason == "blocked") {
      EXPECT_EQ(outcome.jobs, 0) << "a blocked source is never queued for a fetch";
      return true;
    }
    EXPECT_EQ(outcome.state, MentionState::kPending);
    EXPECT_EQ(outcome.jobs, 1);
    return false;
  }

  std::string url_;
  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgMentionStore> mentions_;
  std::unique_ptr<PgBlocklistStore> blocks_;
  std::unique_ptr<PgSiteStore> sites_;
};

TEST_F(VerifierPgBlocklistStoreTest, GlobalDomainBlocksTheDomainAndSubdomainsOnLabelBoundary) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  Block("", BlockKind::kDomain, "evil.example");
  EXPECT_TRUE(Blocked("https://evil.example/p", "https://b.example/post"));
  EXPECT_TRUE(Blocked("https://a.b.evil.example:8443/p", "https://b.example/post"));
  EXPECT_TRUE(Blocked("http://evil.example/p", "https://c.example/post")) << "global: every site";
  EXPECT_FALSE(Blocked("https://notevil.example/p", "https://b.example/post"));
  EXPECT_FALSE(Blocked("https://evil.example.org/p", "https://b.example/post"));
}

TEST_F(VerifierPgBlocklistStoreTest, SiteEntriesBlockOnlyForThatSite) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  Block("b.example", BlockKind::kDomain, "spam.example");
  Block("b.example", BlockKind::kPrefix, "https://host.example/~spammer/");
  EXPECT_TRUE(Blocked("https://x.spam.example/", "https://b.example/post"));
  EXPECT_FALSE(Blocked("https://x.spam.example/", "https://c.example/post"));
  EXPECT_TRUE(Blocked("https://host.example/~spammer/1", "https://b.example/post"));
  EXPECT_FALSE(Blocked("https://host.example/~spammer/1", "https://c.example/post"));
  EXPECT_FALSE(Blocked("https://host.example/~other/1", "https://b.example/post"));
  EXPECT_FALSE(Blocked("https://host.example/~spammer", "https://b.example/post"))
      << "a prefix is a plain prefix of the normalized source";
}

TEST_F(VerifierPgBlocklistStoreTest, BlockedVerifiedMentionStopsBeingServedAndLosesItsJob) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  EXPECT_FALSE(Blocked("https://evil.example/p", "https://b.example/post"));
  {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    transaction.exec("UPDATE mentions SET state = 'VERIFIED', type = 'reply'");
  }
  Block("", BlockKind::kDomain, "evil.example");
  EXPECT_TRUE(Blocked("https://evil.example/p", "https://b.example/post"));
  // Submitted again while blocked: still FAILED blocked, nothing queued, one row.
  EXPECT_TRUE(Blocked("https://evil.example/p", "https://b.example/post"));
  pqxx::connection connection(url_);
  pqxx::nontransaction transaction(connection);
  EXPECT_EQ(transaction.exec1("SELECT count(*) FROM mentions")[0].as<int>(), 1);
  // Unblocked: the next submission is a fresh one once the failure retention is over; until
  // then the FAILED decision stands (the ordinary lifecycle).
  ASSERT_TRUE(*blocks_->RemoveBlock({"", BlockKind::kDomain, "evil.example"}, {}));
  EXPECT_EQ(Submit("https://evil.example/p", "https://b.example/post").state,
            MentionState::kFailed);
}

TEST_F(VerifierPgBlocklistStoreTest, AddListRemoveByScope) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  Block("", BlockKind::kDomain, "evil.example");
  Block("b.example", BlockKind::kDomain, "evil.example");
  Block("b.example", BlockKind::kPrefix, "https://h.example/x/");
  absl::StatusOr<bool> again = blocks_->AddBlock({"", BlockKind::kDomain, "evil.example"}, {});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again) << "a repeat is no new entry";
  EXPECT_EQ(
      blocks_->AddBlock({"nope.example", BlockKind::kDomain, "x.example"}, {}).status().code(),
      absl::StatusCode::kNotFound);

  absl::StatusOr<std::vector<BlockRecord>> global = blocks_->ListBlocks("", "", "", 10, {});
  ASSERT_TRUE(global.ok()) << global.status();
  ASSERT_EQ(global->size(), 1u);
  EXPECT_EQ((*global)[0].entry.value, "evil.example");
  absl::StatusOr<std::vector<BlockRecord>> site = blocks_->ListBlocks("b.example", "", "", 1, {});
  ASSERT_TRUE(site.ok());
  ASSERT_EQ(site->size(), 1u);
  EXPECT_EQ((*site)[0].entry.kind, BlockKind::kDomain);
  absl::StatusOr<std::vector<BlockRecord>> next =
      blocks_->ListBlocks("b.example", "DOMAIN", "evil.example", 10, {});
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].entry.value, "https://h.example/x/");
  EXPECT_EQ(blocks_->ListBlocks("nope.example", "", "", 10, {}).status().code(),
            absl::StatusCode::kNotFound);

  EXPECT_TRUE(*blocks_->RemoveBlock({"b.example", BlockKind::kDomain, "evil.example"}, {}));
  EXPECT_FALSE(*blocks_->RemoveBlock({"b.example", BlockKind::kDomain, "evil.example"}, {}));
  EXPECT_EQ(blocks_->ListBlocks("", "", "", 10, {})->size(), 1u) << "the global entry stays";
}

// Tenant scoping: a token bound to b.example, beside c.example's and the global entries.
TEST_F(VerifierPgBlocklistStoreTest, ABoundTokenManagesOnlyItsSitesEntries) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  Block("", BlockKind::kDomain, "evil.example");
  Block("c.example", BlockKind::kDomain, "spam.example");
  const SiteBinding b_only = {"b.example"};
  const auto count = [&](const std::string& site) {
    absl::StatusOr<std::vector<BlockRecord>> records = blocks_->ListBlocks(site, "", "", 10, {});
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? records->size() : 0u;
  };

  absl::StatusOr<bool> own =
      blocks_->AddBlock({"b.example", BlockKind::kDomain, "x.example"}, b_only);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_TRUE(*own);
  absl::StatusOr<std::vector<BlockRecord>> listed =
      blocks_->ListBlocks("b.example", "", "", 10, b_only);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].entry.value, "x.example");

  // Another site's entries and the global ones: refused, read or write, and nothing changes.
  for (const char* site : {"c.example", ""}) {
    EXPECT_EQ(blocks_->ListBlocks(site, "", "", 10, b_only).status().code(),
              absl::StatusCode::kPermissionDenied)
        << site;
    EXPECT_EQ(blocks_->AddBlock({site, BlockKind::kDomain, "y.example"}, b_only).status().code(),
              absl::StatusCode::kPermissionDenied)
        << site;
  }
  EXPECT_EQ(blocks_->RemoveBlock({"c.example", BlockKind::kDomain, "spam.example"}, b_only)
                .status()
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(blocks_->RemoveBlock({"", BlockKind::kDomain, "evil.example"}, b_only).status().code(),
            absl::StatusCode::kPermissionDenied);
  // A site outside the binding is refused whether or not it is served.
  EXPECT_EQ(
      blocks_->AddBlock({"nope.example", BlockKind::kDomain, "y.example"}, b_only).status().code(),
      absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(count(""), 1u);
  EXPECT_EQ(count("c.example"), 1u);
  EXPECT_EQ(count("b.example"), 1u);
  // The global entry still applies to the bound site's mentions.
  EXPECT_TRUE(Blocked("https://evil.example/post", "https://b.example/"));

  // Bound to both sites: both sites' entries, still not the global ones.
  const SiteBinding both = {"b.example", "c.example"};
  absl::StatusOr<std::vector<BlockRecord>> c_entries =
      blocks_->ListBlocks("c.example", "", "", 10, both);
  ASSERT_TRUE(c_entries.ok()) << c_entries.status();
  EXPECT_EQ(c_entries->size(), 1u);
  EXPECT_EQ(blocks_->ListBlocks("", "", "", 10, both).status().code(),
            absl::StatusCode::kPermissionDenied);
  absl::StatusOr<bool> removed =
      blocks_->RemoveBlock({"c.example", BlockKind::kDomain, "spam.example"}, both);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_TRUE(*removed);
  EXPECT_EQ(count("c.example"), 0u);
}

}  // namespace
}  // namespace portcullis::verifier::store
