#include "verifier-service/src/store/pg_token_store.h"

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/auth/stored_tokens.h"
#include "verifier-service/src/auth/token_registry.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgTokenStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgTokenStore>(*pool_);
  }

  TokenHolder Caller(const std::string& name, const std::string& scopes,
                     auth::SiteBinding sites = {}) {
    auth::Caller caller;
    caller.name = name;
    caller.scopes = auth::ParseScopes(scopes).value();
    caller.sites = std::move(sites);
    return auth::HolderOf(caller);
  }

  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgTokenStore> store_;
};

TEST_F(VerifierPgTokenStoreTest, CreatedTokenAuthenticatesThroughTheRegistryUntilRevoked) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string token = auth::GenerateToken();
  absl::StatusOr<TokenRecord> created = store_->CreateToken(
      auth::HashToken(token), Caller("alice-site", "read,submit", {"alice.example"}));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->caller.token_id.size(), 36u);
  EXPECT_EQ(created->caller.sites, auth::SiteBinding{"alice.example"});
  EXPECT_FALSE(created->revoked_at.has_value());

  auth::TokenRegistry registry(*store_, {}, absl::Hours(1));
  ASSERT_TRUE(registry.Refresh().ok());
  absl::StatusOr<auth::Caller> caller = registry.Authenticate("Bearer " + token);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->token_id, created->caller.token_id);
  EXPECT_EQ(auth::FormatScopes(caller->scopes), "read,submit");
  EXPECT_TRUE(caller->MaySee("alice.example"));
  EXPECT_FALSE(caller->MaySee("bob.example"));

  absl::StatusOr<TokenRecord> revoked = store_->RevokeToken(created->caller.token_id);
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_TRUE(revoked->revoked_at.has_value());
  ASSERT_TRUE(registry.Refresh().ok());
  EXPECT_EQ(registry.Authenticate("Bearer " + token).status().code(),
            absl::StatusCode::kUnauthenticated);

  // Revoked tokens stay listed, for the record.
  absl::StatusOr<std::vector<TokenRecord>> all = store_->ListTokens();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_TRUE((*all)[0].revoked_at.has_value());
}

TEST_F(VerifierPgTokenStoreTest, OnlyTheHashIsStored) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string token = auth::GenerateToken();
  ASSERT_TRUE(store_->CreateToken(auth::HashToken(token), Caller("admin", "admin")).ok());
  std::string dump;
  ASSERT_TRUE(pool_
                  ->Run("dump",
                        [&](pqxx::connection& connection) {
                          pqxx::read_transaction transaction(connection);
                          for (const pqxx::row& row :
                               transaction.exec("SELECT row_to_json(t)::text FROM api_tokens t")) {
                            dump += row[0].as<std::string>();
                          }
                        })
                  .ok());
  EXPECT_EQ(dump.find(token), std::string::npos);
  EXPECT_EQ(dump.find(token.substr(4)), std::string::npos);
  EXPECT_NE(dump.find(auth::HashToken(token)), std::string::npos);
}

TEST_F(VerifierPgTokenStoreTest, RevokingAnUnknownIdIsNotFound) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  EXPECT_EQ(store_->RevokeToken("00000000-0000-0000-0000-000000000000").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->RevokeToken("'; DROP TABLE api_tokens; --").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace portcullis::verifier::store
