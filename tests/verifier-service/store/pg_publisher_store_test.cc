#include "verifier-service/src/store/pg_publisher_store.h"

#include "gtest/gtest.h"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

class VerifierPgPublisherStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgPublisherStore>(*pool_);
  }

  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgPublisherStore> store_;
};

TEST_F(VerifierPgPublisherStoreTest, AddPublisherIsIdempotentAndKeepsTheFirstSettings) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<AddPublisherResult> first = store_->AddPublisher({"feed", true, false, 60});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_TRUE(first->publisher.enabled);
  absl::StatusOr<AddPublisherResult> second = store_->AddPublisher({"feed", false, true, 0});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->created);
  EXPECT_TRUE(second->publisher.settings.verified);
  EXPECT_FALSE(second->publisher.settings.require_signature);
  EXPECT_EQ(second->publisher.settings.retention_seconds, 60);
  absl::StatusOr<std::optional<PublisherRecord>> missing = store_->GetPublisher("nobody");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(VerifierPgPublisherStoreTest, UpdateSettingsChangesOnlyWhatIsSet) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->AddPublisher({"feed", true, false, 60}).ok());
  absl::StatusOr<PublisherRecord> updated =
      store_->UpdateSettings("feed", {.keep_drops_seconds = 3600});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->settings.keep_drops_seconds, 3600);
  EXPECT_FALSE(updated->settings.require_c2pa_for_media);
  EXPECT_EQ(updated->settings.c2pa_trust, "");
  updated = store_->UpdateSettings(
      "feed", {.require_c2pa_for_media = true, .c2pa_trust = std::string("PEM TEXT")});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->settings.keep_drops_seconds, 3600);
  EXPECT_TRUE(updated->settings.require_c2pa_for_media);
  EXPECT_EQ(updated->settings.c2pa_trust, "PEM TEXT");
  updated = store_->UpdateSettings("feed", {.c2pa_trust = std::string()});
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_TRUE(updated->settings.require_c2pa_for_media);
  EXPECT_EQ(updated->settings.c2pa_trust, "");
  absl::StatusOr<std::optional<PublisherRecord>> read = store_->GetPublisher("feed");
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_TRUE((*read)->settings.require_c2pa_for_media);
  EXPECT_TRUE((*read)->settings.verified);
  EXPECT_TRUE(
      absl::IsNotFound(store_->UpdateSettings("nobody", {.keep_drops_seconds = 1}).status()));

  PublisherSettings strict{"strict", false, false, 0, 0, true, "PEM"};
  absl::StatusOr<AddPublisherResult> added = store_->AddPublisher(strict);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(added->publisher.settings.require_c2pa_for_media);
  EXPECT_EQ(added->publisher.settings.c2pa_trust, "PEM");
}

TEST_F(VerifierPgPublisherStoreTest, KeysAreAddedOnceRevokedAndListedWithTheirPublisher) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->AddPublisher({"feed", false, false, 0}).ok());
  EXPECT_TRUE(absl::IsNotFound(store_->AddKey("nobody", kHmacSha256Algorithm, "x").status()));
  const std::string secret(24, '\0');  // Binary material survives the round trip.
  absl::StatusOr<AddKeyResult> added = store_->AddKey("feed", kHmacSha256Algorithm, secret);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(added->created);
  EXPECT_EQ(added->key.fingerprint.size(), 8u);
  absl::StatusOr<AddKeyResult> again = store_->AddKey("feed", kHmacSha256Algorithm, secret);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->key.key_id, added->key.key_id);
  ASSERT_TRUE(store_->AddKey("feed", kEd25519Algorithm, std::string(32, 'e')).ok());

  absl::StatusOr<PublisherKeyRecord> revoked = store_->RevokeKey("feed", added->key.key_id);
  ASSERT_TRUE(revoked.ok()) << revoked.status();
  EXPECT_FALSE(revoked->active());
  EXPECT_TRUE(absl::IsNotFound(store_->RevokeKey("other", added->key.key_id).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->RevokeKey("feed", "not-a-uuid").status()));
  // Re-adding a revoked key makes a new active key.
  absl::StatusOr<AddKeyResult> readded = store_->AddKey("feed", kHmacSha256Algorithm, secret);
  ASSERT_TRUE(readded.ok());
  EXPECT_TRUE(readded->created);
  EXPECT_NE(readded->key.key_id, added->key.key_id);

  absl::StatusOr<std::optional<PublisherRecord>> feed = store_->GetPublisher("feed");
  ASSERT_TRUE(feed.ok() && feed->has_value());
  ASSERT_EQ((*feed)->keys.size(), 3u);
  EXPECT_EQ((*feed)->keys[0].material, secret);
  EXPECT_FALSE((*feed)->keys[0].active());
  EXPECT_TRUE((*feed)->keys[1].active());
  EXPECT_EQ((*feed)->keys[1].algorithm, kEd25519Algorithm);
}

TEST_F(VerifierPgPublisherStoreTest, ListPagesByNameAndSetEnabledFlips) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  for (const char* name : {"c", "a", "b"}) {
    ASSERT_TRUE(store_->AddPublisher({name, false, false, 0}).ok());
  }
  ASSERT_TRUE(store_->AddKey("b", kEd25519Algorithm, std::string(32, 'b')).ok());
  absl::StatusOr<std::vector<PublisherRecord>> page = store_->ListPublishers("", 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].settings.name, "a");
  EXPECT_EQ((*page)[1].settings.name, "b");
  EXPECT_EQ((*page)[1].keys.size(), 1u);
  page = store_->ListPublishers("b", 2);
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].settings.name, "c");

  absl::StatusOr<PublisherRecord> disabled = store_->SetEnabled("b", false);
  ASSERT_TRUE(disabled.ok());
  EXPECT_FALSE(disabled->enabled);
  EXPECT_EQ(disabled->keys.size(), 1u);
  EXPECT_FALSE((*store_->GetPublisher("b"))->enabled);
  EXPECT_TRUE(absl::IsNotFound(store_->SetEnabled("z", false).status()));
}

}  // namespace
}  // namespace portcullis::verifier::store
