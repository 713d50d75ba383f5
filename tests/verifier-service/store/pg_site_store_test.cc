#include "verifier-service/src/store/pg_site_store.h"

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

using intake::TargetKind;
using intake::TargetRule;

class VerifierPgSiteStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgSiteStore>(*pool_);
  }

  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgSiteStore> store_;
};

TEST_F(VerifierPgSiteStoreTest, AddSiteIsIdempotent) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<AddSiteResult> first = store_->AddSite("blog.example", {});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  absl::StatusOr<AddSiteResult> second = store_->AddSite("blog.example", {});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->site.created_at, first->site.created_at);
  absl::StatusOr<std::vector<SiteRecord>> sites = store_->ListSites("", 10, {});
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 1u);
  EXPECT_EQ((*sites)[0].domain, "blog.example");
}

TEST_F(VerifierPgSiteStoreTest, ListSitesPagesByDomainAndCountsTargets) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  for (const char* domain : {"c.example", "a.example", "b.example"}) {
    ASSERT_TRUE(store_->AddSite(domain, {}).ok());
  }
  const std::vector<TargetRule> rules = {{"https://a.example/1", TargetKind::kExact, "a.example"},
                                         {"https://a.example/2", TargetKind::kExact, "a.example"}};
  ASSERT_TRUE(store_->AddTargets(rules, {}).ok());
  absl::StatusOr<std::vector<SiteRecord>> page = store_->ListSites("", 2, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].domain, "a.example");
  EXPECT_EQ((*page)[0].target_count, 2);
  EXPECT_EQ((*page)[1].domain, "b.example");
  page = store_->ListSites("b.example", 2, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].domain, "c.example");
}

TEST_F(VerifierPgSiteStoreTest, AddTargetsIsAllOrNothing) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->AddSite("blog.example", {}).ok());
  const std::vector<TargetRule> rules = {
      {"https://blog.example/a", TargetKind::kExact, "blog.example"},
      {"https://other.example/b", TargetKind::kExact, "other.example"},
  };
  const absl::Status refused = store_->AddTargets(rules, {}).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_NE(refused.message().find("target 1"), absl::string_view::npos) << refused;
  EXPECT_NE(refused.message().find("other.example"), absl::string_view::npos) << refused;
  absl::StatusOr<std::vector<TargetRecord>> listed = store_->ListTargets("", std::nullopt, 10, {});
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty()) << "the valid first entry was rolled back too";
}

TEST_F(VerifierPgSiteStoreTest, AddTargetsCountsWhatWasAlreadyThere) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->AddSite("blog.example", {}).ok());
  const TargetRule a{"https://blog.example/a", TargetKind::kExact, "blog.example"};
  const TargetRule posts{"https://blog.example/posts/", TargetKind::kPrefix, "blog.example"};
  ASSERT_TRUE(store_->AddTargets({a}, {}).ok());
  absl::StatusOr<AddTargetsResult> result = store_->AddTargets({a, posts, posts}, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->added, 1);
  EXPECT_EQ(result->already_present, 2);
  ASSERT_EQ(result->targets.size(), 3u);
  EXPECT_EQ(result->targets[1].rule, posts);
}

TEST_F(VerifierPgSiteStoreTest, ListTargetsPagesAndFiltersBySite) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->AddSite("a.example", {}).ok());
  ASSERT_TRUE(store_->AddSite("b.example", {}).ok());
  const std::vector<TargetRule> rules = {
      {"https://a.example/", TargetKind::kExact, "a.example"},
      {"https://a.example/", TargetKind::kPrefix, "a.example"},
      {"https://a.example/x", TargetKind::kExact, "a.example"},
      {"https://b.example/y", TargetKind::kExact, "b.example"},
  };
  ASSERT_TRUE(store_->AddTargets(rules, {}).ok());
  absl::StatusOr<std::vector<TargetRecord>> first = store_->ListTargets("", std::nullopt, 2, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].rule, rules[0]);
  EXPECT_EQ((*first)[1].rule, rules[1]);
  absl::StatusOr<std::vector<TargetRecord>> rest =
      store_->ListTargets("", (*first)[1].rule, 10, {});
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[0].rule, rules[2]);
  EXPECT_EQ((*rest)[1].rule, rules[3]);
  absl::StatusOr<std::vector<TargetRecord>> only_b =
      store_->ListTargets("b.example", std::nullopt, 10, {});
  ASSERT_TRUE(only_b.ok());
  ASSERT_EQ(only_b->size(), 1u);
  EXPECT_EQ((*only_b)[0].rule.domain, "b.example");
  EXPECT_TRUE(absl::IsNotFound(store_->ListTargets("c.example", std::nullopt, 10, {}).status()));
}

TEST_F(VerifierPgSiteStoreTest, RemoveTargetAndRemoveSite) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->AddSite("blog.example", {}).ok());
  const std::vector<TargetRule> rules = {
      {"https://blog.example/a", TargetKind::kExact, "blog.example"},
      {"https://blog.example/b", TargetKind::kExact, "blog.example"},
      {"https://blog.example/c/", TargetKind::kPrefix, "blog.example"},
  };
  ASSERT_TRUE(store_->AddTargets(rules, {}).ok());
  absl::StatusOr<TargetRecord> removed =
      store_->RemoveTarget("https://blog.example/a", TargetKind::kExact, {});
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->rule, rules[0]);
  EXPECT_TRUE(absl::IsNotFound(
      store_->RemoveTarget("https://blog.example/a", TargetKind::kExact, {}).status()));
  EXPECT_TRUE(absl::IsNotFound(
      store_->RemoveTarget("https://blog.example/c/", TargetKind::kExact, {}).status()))
      << "the kind is part of the rule";

  absl::StatusOr<int64_t> removed_targets = store_->RemoveSite("blog.example", {});
  ASSERT_TRUE(removed_targets.ok()) << removed_targets.status();
  EXPECT_EQ(*removed_targets, 2);
  EXPECT_TRUE(absl::IsNotFound(store_->RemoveSite("blog.example", {}).status()));
  pqxx::connection connection(db->connection_string());
  pqxx::nontransaction transaction(connection);
  EXPECT_EQ(transaction.exec1("SELECT count(*) FROM targets")[0].as<int>(), 0);
}

}  // namespace
}  // namespace portcullis::verifier::store
