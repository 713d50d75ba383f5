#include "verifier-service/src/store/pg_mention_store.h"

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgMentionStoreTest : public ::testing::Test {
 protected:
  // Migrates `url` and builds the store over it.
  void Open(const std::string& url) {
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    absl::StatusOr<std::vector<int>> applied = Migrator(*migrations).Apply(url);
    ASSERT_TRUE(applied.ok()) << applied.status();
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgMentionStore>(*pool_);
  }

  static NewMention Mention(const std::string& source, const std::string& target) {
    return {source, target, crypto::Sha256(source), crypto::Sha256(target)};
  }

  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgMentionStore> store_;
};

TEST_F(VerifierPgMentionStoreTest, FirstUpsertCreatesPendingSecondReturnsTheSameRow) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<UpsertResult> first =
      store_->UpsertPending(Mention("https://a.example/", "https://b.example/"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->state, MentionState::kPending);
  EXPECT_TRUE(IsMentionId(first->mention_id)) << first->mention_id;

  NewMention again = Mention("https://a.example/", "https://b.example/");
  again.source = "HTTPS://A.example/";  // Spelled differently, same hashes.
  absl::StatusOr<UpsertResult> second = store_->UpsertPending(again);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->mention_id, first->mention_id);
  EXPECT_EQ(second->state, MentionState::kPending);

  pqxx::connection connection(db->connection_string());
  pqxx::nontransaction transaction(connection);
  EXPECT_EQ(transaction.exec1("SELECT count(*) FROM mentions")[0].as<int>(), 1);
  EXPECT_EQ(transaction.exec1("SELECT source FROM mentions")[0].as<std::string>(),
            "https://a.example/")
      << "the first submission's spelling is kept";
}

TEST_F(VerifierPgMentionStoreTest, ExistingStateIsReturnedUnchanged) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<UpsertResult> first =
      store_->UpsertPending(Mention("https://a.example/", "https://b.example/"));
  ASSERT_TRUE(first.ok()) << first.status();
  {
    pqxx::connection connection(db->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0("UPDATE mentions SET state = 'VERIFIED'");
    transaction.commit();
  }
  absl::StatusOr<UpsertResult> second =
      store_->UpsertPending(Mention("https://a.example/", "https://b.example/"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->state, MentionState::kVerified);
  EXPECT_FALSE(second->created);
}

TEST_F(VerifierPgMentionStoreTest, GetReturnsTheMention) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const absl::Time before = absl::Now() - absl::Minutes(1);
  absl::StatusOr<UpsertResult> created =
      store_->UpsertPending(Mention("https://a.example/x", "https://b.example/y"));
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<StoredMention> mention = store_->Get(created->mention_id);
  ASSERT_TRUE(mention.ok()) << mention.status();
  EXPECT_EQ(mention->mention_id, created->mention_id);
  EXPECT_EQ(mention->source, "https://a.example/x");
  EXPECT_EQ(mention->target, "https://b.example/y");
  EXPECT_EQ(mention->state, MentionState::kPending);
  EXPECT_EQ(mention->reason, "");
  EXPECT_GT(mention->created_at, before);
  EXPECT_GE(mention->updated_at, mention->created_at);
  // Case does not matter in a UUID.
  EXPECT_TRUE(store_->Get(absl::AsciiStrToUpper(created->mention_id)).ok());
}

TEST_F(VerifierPgMentionStoreTest, GetUnknownIsNotFoundAndNonUuidIsInvalid) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  EXPECT_TRUE(absl::IsNotFound(store_->Get("00000000-0000-4000-8000-000000000000").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Get("1; DROP TABLE mentions").status()));
  EXPECT_TRUE(store_->Ping().ok());
}

TEST_F(VerifierPgMentionStoreTest, DeadServerIsUnavailable) {
  absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
      PgConnectionPool::Create({"host=/nonexistent/portcullis user=postgres dbname=none", 2,
                                absl::Seconds(1), absl::Seconds(1)});
  ASSERT_TRUE(pool.ok());
  PgMentionStore store(**pool);
  EXPECT_TRUE(absl::IsUnavailable(
      store.UpsertPending(Mention("https://a.example/", "https://b.example/")).status()));
  EXPECT_TRUE(absl::IsUnavailable(store.Get("00000000-0000-4000-8000-000000000000").status()));
  EXPECT_TRUE(absl::IsUnavailable(store.Ping()));
}

}  // namespace
}  // namespace portcullis::verifier::store
