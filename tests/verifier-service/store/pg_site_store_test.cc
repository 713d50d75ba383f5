#include "verifier-service/src/store/pg_site_store.h"

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

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

// Tenant scoping: a token bound to a.example, beside b.example's data.
class VerifierPgSiteTenancyTest : public VerifierPgSiteStoreTest {
 protected:
  void OpenTwoSites(const std::string& url) {
    Open(url);
    ASSERT_TRUE(store_->AddSite("a.example", {}).ok());
    ASSERT_TRUE(store_->AddSite("b.example", {}).ok());
    const std::vector<TargetRule> rules = {
        {"https://a.example/", TargetKind::kPrefix, "a.example"},
        {"https://b.example/", TargetKind::kPrefix, "b.example"},
        {"https://b.example/x", TargetKind::kExact, "b.example"}};
    ASSERT_TRUE(store_->AddTargets(rules, {}).ok());
  }

  std::vector<std::string> Sites(const SiteBinding& binding) {
    std::vector<std::string> domains;
    absl::StatusOr<std::vector<SiteRecord>> sites = store_->ListSites("", 100, binding);
    EXPECT_TRUE(sites.ok()) << sites.status();
    for (const SiteRecord& site : sites.ok() ? *sites : std::vector<SiteRecord>()) {
      domains.push_back(site.domain);
    }
    return domains;
  }

  std::vector<std::string> Targets(const std::string& domain, const SiteBinding& binding) {
    std::vector<std::string> urls;
    absl::StatusOr<std::vector<TargetRecord>> targets =
        store_->ListTargets(domain, std::nullopt, 100, binding);
    EXPECT_TRUE(targets.ok()) << targets.status();
    for (const TargetRecord& target : targets.ok() ? *targets : std::vector<TargetRecord>()) {
      urls.push_back(target.rule.url);
    }
    return urls;
  }

  const SiteBinding a_only_ = {"a.example"};
  const std::vector<std::string> all_sites_ = {"a.example", "b.example"};
  const std::vector<std::string> all_targets_ = {"https://a.example/", "https://b.example/",
                                                 "https://b.example/x"};
};

TEST_F(VerifierPgSiteTenancyTest, ABoundTokenListsOnlyItsSitesAndTargets) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenTwoSites(db->connection_string());
  EXPECT_EQ(Sites(a_only_), (std::vector<std::string>{"a.example"}));
  EXPECT_EQ(Targets("", a_only_), (std::vector<std::string>{"https://a.example/"}));
  EXPECT_EQ(Targets("a.example", a_only_), (std::vector<std::string>{"https://a.example/"}));
  EXPECT_TRUE(absl::IsPermissionDenied(
      store_->ListTargets("b.example", std::nullopt, 10, a_only_).status()));
  // Outside the binding whether or not served: nothing tells a bound admin which sites exist.
  EXPECT_TRUE(absl::IsPermissionDenied(
      store_->ListTargets("nope.example", std::nullopt, 10, a_only_).status()));
  // Unbound sees all; bound to both sees both.
  EXPECT_EQ(Sites({}), all_sites_);
  EXPECT_EQ(Sites({"b.example", "a.example"}), all_sites_);
  EXPECT_EQ(Targets("", {}), all_targets_);
  EXPECT_EQ(Targets("", {"a.example", "b.example"}), all_targets_);
}

TEST_F(VerifierPgSiteTenancyTest, ABoundTokenCannotChangeAnotherSite) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenTwoSites(db->connection_string());
  EXPECT_TRUE(absl::IsPermissionDenied(store_->AddSite("c.example", a_only_).status()));
  EXPECT_TRUE(absl::IsPermissionDenied(store_->RemoveSite("b.example", a_only_).status()));
  EXPECT_TRUE(absl::IsPermissionDenied(store_->RemoveSite("nope.example", a_only_).status()));
  // All or nothing: the first rule is a.example's, the second b.example's.
  const std::vector<TargetRule> mixed = {
      {"https://a.example/new", TargetKind::kExact, "a.example"},
      {"https://b.example/new", TargetKind::kExact, "b.example"}};
  const absl::Status refused = store_->AddTargets(mixed, a_only_).status();
  EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;
  EXPECT_NE(refused.message().find("target 1"), absl::string_view::npos) << refused;
  const absl::Status removed =
      store_->RemoveTarget("https://b.example/x", TargetKind::kExact, a_only_).status();
  EXPECT_TRUE(absl::IsPermissionDenied(removed)) << removed;
  EXPECT_EQ(removed.message().find("b.example"), absl::string_view::npos)
      << "names nothing of the other site: " << removed;
  // The database is unchanged.
  EXPECT_EQ(Sites({}), all_sites_);
  EXPECT_EQ(Targets("", {}), all_targets_);
}

TEST_F(VerifierPgSiteTenancyTest, ABoundTokenManagesItsOwnSite) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenTwoSites(db->connection_string());
  absl::StatusOr<AddSiteResult> again = store_->AddSite("a.example", a_only_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  const TargetRule rule{"https://a.example/about", TargetKind::kExact, "a.example"};
  ASSERT_TRUE(store_->AddTargets(absl::MakeConstSpan(&rule, 1), a_only_).ok());
  EXPECT_TRUE(absl::IsNotFound(
      store_->RemoveTarget("https://a.example/none", TargetKind::kExact, a_only_).status()));
  EXPECT_TRUE(store_->RemoveTarget("https://a.example/about", TargetKind::kExact, a_only_).ok());
  absl::StatusOr<int64_t> removed = store_->RemoveSite("a.example", a_only_);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1);
  EXPECT_EQ(Sites({}), (std::vector<std::string>{"b.example"}));
  EXPECT_TRUE(absl::IsNotFound(store_->RemoveSite("a.example", a_only_).status()));
}

TEST_F(VerifierPgSiteTenancyTest, ABindingCannotBreakOutOfItsArray) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  OpenTwoSites(db->connection_string());
  // Were the elements pasted unquoted, these would match a.example or b.example.
  const SiteBinding crafted = {R"(x","a.example)", "b.example}", "a.example,b.example"};
  EXPECT_TRUE(Sites(crafted).empty());
  EXPECT_TRUE(Targets("", crafted).empty());
}

}  // namespace
}  // namespace portcullis::verifier::store
