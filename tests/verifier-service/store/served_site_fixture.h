#pragma once

// The store tests' common ground: a migrated database with one served site, b.example, every
// https://b.example/ URL a target; a PgMentionStore over a small pool; submissions from any
// source to https://b.example/post; and a count of rows read on a connection of the test's own.

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_mention_store.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::store {

class ServedSiteStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url, SubmitLimits limits = {}) {
    url_ = url;
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgMentionStore>(*pool_);
    store_->SetLimits(limits);
    PgSiteStore sites(*pool_);
    ASSERT_TRUE(sites.AddSite("b.example", {}).ok());
    const TargetRule everything{"https://b.example/", TargetKind::kPrefix, "b.example"};
    ASSERT_TRUE(sites.AddTargets(absl::MakeConstSpan(&everything, 1), {}).ok());
  }

  // A submission from `source` (already normalized) to https://b.example/post.
  static NewMention Mention(const std::string& source) {
    const std::string target = "https://b.example/post";
    return {source, target, crypto::Sha256(source), crypto::Sha256(target), "b.example", target,
            source};
  }

  long long Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<long long>();
  }

  std::string url_;
  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgMentionStore> store_;
};

}  // namespace portcullis::verifier::store
