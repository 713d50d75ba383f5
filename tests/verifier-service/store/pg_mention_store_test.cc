#include "verifier-service/src/store/pg_mention_store.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_site_store.h"

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
    sites_ = std::make_unique<PgSiteStore>(*pool_);
    // Every test's targets are on b.example.
    ASSERT_TRUE(sites_->AddSite("b.example").ok());
    const intake::TargetRule everything{"https://b.example/", intake::TargetKind::kPrefix,
                                        "b.example"};
    ASSERT_TRUE(sites_->AddTargets(absl::MakeConstSpan(&everything, 1)).ok());
  }

  // `source` and `target` already normalized.
  static NewMention Mention(const std::string& source, const std::string& target) {
    absl::string_view host = target;
    host.remove_prefix(host.find("//") + 2);
    host = host.substr(0, host.find_first_of(":/"));
    return {source, target, crypto::Sha256(source), crypto::Sha256(target), std::string(host),
            target};
  }

  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgMentionStore> store_;
  std::unique_ptr<PgSiteStore> sites_;
};

TEST_F(VerifierPgMentionStoreTest, FirstUpsertCreatesPendingSecondReturnsTheSameRow) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<SubmitResult> first =
      store_->Submit(Mention("https://a.example/", "https://b.example/"));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->state, MentionState::kPending);
  EXPECT_TRUE(IsMentionId(first->mention_id)) << first->mention_id;

  NewMention again = Mention("https://a.example/", "https://b.example/");
  again.source = "HTTPS://A.example/";  // Spelled differently, same hashes.
  absl::StatusOr<SubmitResult> second = store_->Submit(again);
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
  absl::StatusOr<SubmitResult> first =
      store_->Submit(Mention("https://a.example/", "https://b.example/"));
  ASSERT_TRUE(first.ok()) << first.status();
  {
    pqxx::connection connection(db->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0("UPDATE mentions SET state = 'VERIFIED'");
    transaction.commit();
  }
  absl::StatusOr<SubmitResult> second =
      store_->Submit(Mention("https://a.example/", "https://b.example/"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->state, MentionState::kVerified);
  EXPECT_FALSE(second->created);
}

TEST_F(VerifierPgMentionStoreTest, TargetMustBeOnAServedSiteAndMatchARule) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(sites_->AddSite("blog.example").ok());
  const std::vector<intake::TargetRule> rules = {
      {"https://blog.example/about", intake::TargetKind::kExact, "blog.example"},
      {"https://blog.example/posts/", intake::TargetKind::kPrefix, "blog.example"}};
  ASSERT_TRUE(sites_->AddTargets(rules).ok());

  const std::pair<const char*, TargetMatch> cases[] = {
      {"https://blog.example/about", TargetMatch::kServed},
      {"https://blog.example/about/", TargetMatch::kUnknownResource},
      {"https://blog.example/about?x=1", TargetMatch::kUnknownResource},
      {"https://blog.example/posts/", TargetMatch::kServed},
      {"https://blog.example/posts/2024/hello?page=2", TargetMatch::kServed},
      {"https://blog.example/posts", TargetMatch::kUnknownResource},
      {"https://blog.example/postscript", TargetMatch::kUnknownResource},
      {"http://blog.example/posts/a", TargetMatch::kUnknownResource},
      {"https://blog.example:8443/posts/a", TargetMatch::kUnknownResource},
      {"https://www.blog.example/posts/a", TargetMatch::kUnknownSite},
      {"https://elsewhere.example/", TargetMatch::kUnknownSite},
  };
  for (const auto& [target, expected] : cases) {
    absl::StatusOr<SubmitResult> result = store_->Submit(Mention("https://a.example/", target));
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->target, expected) << target;
    EXPECT_EQ(result->mention_id.empty(), expected != TargetMatch::kServed) << target;
  }
  pqxx::connection connection(db->connection_string());
  pqxx::nontransaction transaction(connection);
  EXPECT_EQ(transaction.exec1("SELECT count(*) FROM mentions")[0].as<int>(), 3)
      << "only served targets are stored";
}

// Runs one query returning one integer.
long long Count(const testing::TestDatabase& db, const std::string& sql) {
  pqxx::connection connection(db.connection_string());
  pqxx::nontransaction transaction(connection);
  return transaction.exec1(sql)[0].as<long long>();
}

void Exec(const testing::TestDatabase& db, const std::string& sql) {
  pqxx::connection connection(db.connection_string());
  pqxx::work transaction(connection);
  transaction.exec0(sql);
  transaction.commit();
}

TEST_F(VerifierPgMentionStoreTest, LifecycleQueuesExactlyAsSpecified) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const NewMention mention = Mention("https://a.example/", "https://b.example/");

  // New pair: PENDING and one job.
  absl::StatusOr<SubmitResult> result = store_->Submit(mention);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->created);
  EXPECT_TRUE(result->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs WHERE kind = 'VERIFY'"), 1);

  // Repeat while PENDING: no second job.
  result = store_->Submit(mention);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->state, MentionState::kPending);
  EXPECT_FALSE(result->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 1);

  // VERIFIED: one re-verification, and never more than one queued.
  Exec(*db, "DELETE FROM verification_jobs; UPDATE mentions SET state = 'VERIFIED'");
  result = store_->Submit(mention);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->state, MentionState::kVerified);
  EXPECT_TRUE(result->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs WHERE kind = 'REVERIFY'"), 1);
  result = store_->Submit(mention);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 1);

  // VERIFIED while its re-verification runs: one more run after it, still one row.
  Exec(*db,
       "UPDATE verification_jobs SET lease_owner = 'w', lease_expires_at = now() + interval "
       "'1 minute'");
  result = store_->Submit(mention);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs WHERE rerun"), 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 1);

  // FAILED recently: nothing queued, the state stays.
  Exec(*db,
       "DELETE FROM verification_jobs; UPDATE mentions SET state = 'FAILED', reason = 'no_link', "
       "updated_at = now() - interval '23 hours'");
  result = store_->Submit(mention);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->state, MentionState::kFailed);
  EXPECT_FALSE(result->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 0);

  // FAILED longer ago than the retention (24h by default): PENDING again, one job.
  Exec(*db, "UPDATE mentions SET updated_at = now() - interval '25 hours'");
  result = store_->Submit(mention);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->state, MentionState::kPending);
  EXPECT_TRUE(result->queued);
  EXPECT_FALSE(result->created);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs WHERE kind = 'VERIFY'"), 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM mentions WHERE state = 'PENDING' AND reason IS NULL"),
            1);
}

TEST_F(VerifierPgMentionStoreTest, FailedRetentionIsConfigurable) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  PgMentionStore short_retention(*pool_, absl::Minutes(5));
  const NewMention mention = Mention("https://a.example/", "https://b.example/");
  ASSERT_TRUE(short_retention.Submit(mention).ok());
  Exec(*db,
       "DELETE FROM verification_jobs; UPDATE mentions SET state = 'FAILED', "
       "updated_at = now() - interval '4 minutes'");
  EXPECT_FALSE(short_retention.Submit(mention)->queued);
  Exec(*db, "UPDATE mentions SET updated_at = now() - interval '6 minutes'");
  EXPECT_TRUE(short_retention.Submit(mention)->queued);
}

TEST_F(VerifierPgMentionStoreTest, ConcurrentIdenticalSubmissionsMakeOneRowAndOneJob) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
      PgConnectionPool::Create({db->connection_string(), 16, absl::Seconds(30), absl::Seconds(30)});
  ASSERT_TRUE(pool.ok());
  PgMentionStore store(**pool);
  std::atomic<int> created{0};
  std::atomic<int> queued{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        absl::StatusOr<SubmitResult> result =
            store.Submit(Mention("https://a.example/", "https://b.example/"));
        if (!result.ok()) {
          ++failed;
          continue;
        }
        created += result->created;
        queued += result->queued;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(queued.load(), 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM mentions"), 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 1);
}

TEST_F(VerifierPgMentionStoreTest, GetReturnsTheMention) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const absl::Time before = absl::Now() - absl::Minutes(1);
  absl::StatusOr<SubmitResult> created =
      store_->Submit(Mention("https://a.example/x", "https://b.example/y"));
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
      store.Submit(Mention("https://a.example/", "https://b.example/")).status()));
  EXPECT_TRUE(absl::IsUnavailable(store.Get("00000000-0000-4000-8000-000000000000").status()));
  EXPECT_TRUE(absl::IsUnavailable(store.Ping()));
}

}  // namespace
}  // namespace portcullis::verifier::store
