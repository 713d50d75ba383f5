#include "verifier-service/src/store/pg_mention_store.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_job_listener.h"
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
    ASSERT_TRUE(sites_->AddSite("b.example", {}).ok());
    const TargetRule everything{"https://b.example/", TargetKind::kPrefix, "b.example"};
    ASSERT_TRUE(sites_->AddTargets(absl::MakeConstSpan(&everything, 1), {}).ok());
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
  EXPECT_TRUE(IsUuid(first->mention_id)) << first->mention_id;

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
  ASSERT_TRUE(sites_->AddSite("blog.example", {}).ok());
  const std::vector<TargetRule> rules = {
      {"https://blog.example/about", TargetKind::kExact, "blog.example"},
      {"https://blog.example/posts/", TargetKind::kPrefix, "blog.example"}};
  ASSERT_TRUE(sites_->AddTargets(rules, {}).ok());

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

TEST_F(VerifierPgMentionStoreTest, RepeatOfAPendingPairWritesNothing) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const NewMention mention = Mention("https://a.example/", "https://b.example/");
  absl::StatusOr<SubmitResult> first = store_->Submit(mention);
  ASSERT_TRUE(first.ok()) << first.status();
  // xmin: the transaction that wrote the row version; any UPDATE (even one that changes nothing)
  // makes a new version.
  const std::string versions =
      "SELECT (SELECT xmin::text FROM mentions) || '/' || (SELECT xmin::text FROM "
      "verification_jobs)";
  pqxx::connection connection(db->connection_string());
  pqxx::nontransaction read(connection);
  const std::string before = read.exec1(versions)[0].as<std::string>();
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<SubmitResult> again = store_->Submit(mention);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->mention_id, first->mention_id);
    EXPECT_EQ(again->state, MentionState::kPending);
    EXPECT_FALSE(again->created);
    EXPECT_FALSE(again->queued);
  }
  EXPECT_EQ(read.exec1(versions)[0].as<std::string>(), before)
      << "neither the mention nor its job was written";
}

TEST_F(VerifierPgMentionStoreTest, RepeatOfAPendingPairWithoutAJobQueuesOne) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const NewMention mention = Mention("https://a.example/", "https://b.example/");
  ASSERT_TRUE(store_->Submit(mention).ok());
  Exec(*db, "DELETE FROM verification_jobs");
  absl::StatusOr<SubmitResult> again = store_->Submit(mention);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->state, MentionState::kPending);
  EXPECT_TRUE(again->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs WHERE kind = 'VERIFY'"), 1);
}

TEST_F(VerifierPgMentionStoreTest, RepeatWhileItsVerificationRunsQueuesOneMoreRun) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const NewMention mention = Mention("https://a.example/", "https://b.example/");
  ASSERT_TRUE(store_->Submit(mention).ok());
  // A worker has claimed the job and is fetching the source: the sender's repeat may mean the
  // source changed after that fetch, so the job runs once more when it finishes.
  Exec(*db,
       "UPDATE verification_jobs SET lease_owner = 'w', lease_expires_at = now() + interval "
       "'1 minute'");
  absl::StatusOr<SubmitResult> again = store_->Submit(mention);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->state, MentionState::kPending);
  EXPECT_TRUE(again->queued);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs WHERE rerun"), 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 1);
}

TEST_F(VerifierPgMentionStoreTest, ABatchAnswersEachSubmissionAsIfSubmittedAlone) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->Submit(Mention("https://pending.example/", "https://b.example/")).ok());
  ASSERT_TRUE(store_->Submit(Mention("https://verified.example/", "https://b.example/")).ok());
  Exec(*db,
       "DELETE FROM verification_jobs WHERE mention_id = (SELECT id FROM mentions WHERE source = "
       "'https://verified.example/'); UPDATE mentions SET state = 'VERIFIED' WHERE source = "
       "'https://verified.example/'");
  Exec(*db, "INSERT INTO source_blocks (kind, value) VALUES ('DOMAIN', 'blocked.example')");

  const std::vector<NewMention> batch = {
      Mention("https://new.example/", "https://b.example/"),
      Mention("https://pending.example/", "https://b.example/"),
      Mention("https://verified.example/", "https://b.example/"),
      Mention("https://blocked.example/", "https://b.example/"),
      Mention("https://new.example/", "https://unknown.example/"),
      Mention("https://new.example/", "https://b.example/"),  // The first one again.
  };
  pqxx::connection connection(db->connection_string());
  const std::vector<absl::StatusOr<SubmitResult>> results =
      store_->SubmitBatch(connection, batch);
  ASSERT_EQ(results.size(), batch.size());
  for (const auto& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
  }
  EXPECT_TRUE(results[0]->created);
  EXPECT_TRUE(results[0]->queued);
  EXPECT_EQ(results[0]->state, MentionState::kPending);
  EXPECT_FALSE(results[1]->created);
  EXPECT_FALSE(results[1]->queued) << "a PENDING pair keeps its one job";
  EXPECT_EQ(results[2]->state, MentionState::kVerified);
  EXPECT_TRUE(results[2]->queued) << "a VERIFIED pair is re-verified";
  EXPECT_EQ(results[3]->state, MentionState::kFailed);
  EXPECT_TRUE(results[3]->created);
  EXPECT_EQ(results[4]->target, TargetMatch::kUnknownSite);
  EXPECT_EQ(results[5]->mention_id, results[0]->mention_id) << "one row for the pair";
  EXPECT_FALSE(results[5]->created) << "the second of a pair is a repeat";
  EXPECT_FALSE(results[5]->queued);

  EXPECT_EQ(Count(*db, "SELECT count(*) FROM mentions"), 4);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM mentions WHERE state = 'FAILED' AND "
                       "reason = 'blocked'"),
            1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 3)
      << "new, pending and the re-verification; nothing for the blocked source";
}

TEST_F(VerifierPgMentionStoreTest, NewMentionsGetIdsInTheOrderTheyWereCreated) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<SubmitResult> result = store_->Submit(
        Mention("https://a" + std::to_string(i) + ".example/", "https://b.example/"));
    ASSERT_TRUE(result.ok()) << result.status();
    ids.push_back(result->mention_id);
    EXPECT_EQ(result->mention_id[14], '7') << "UUID version 7: " << result->mention_id;
    absl::SleepFor(absl::Milliseconds(2));
  }
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()))
      << "new rows land at the right edge of the primary key";
}

TEST_F(VerifierPgMentionStoreTest, ConcurrentFirstSubmissionsAllGetTheSameMention) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
      PgConnectionPool::Create({db->connection_string(), 16, absl::Seconds(30), absl::Seconds(30)});
  ASSERT_TRUE(pool.ok());
  PgMentionStore store(**pool);
  constexpr int kThreads = 16;
  std::vector<absl::StatusOr<SubmitResult>> results(kThreads, absl::UnknownError("not run"));
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) {
      }
      results[t] = store.Submit(Mention("https://c.example/", "https://b.example/x"));
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  int created = 0;
  for (const absl::StatusOr<SubmitResult>& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->mention_id, results[0]->mention_id);
    EXPECT_EQ(result->state, MentionState::kPending);
    created += result->created;
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM mentions"), 1);
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM verification_jobs"), 1);
}

TEST_F(VerifierPgMentionStoreTest, QueuingWakesTheWorkersAndARepeatDoesNot) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  PgJobListener listener(db->connection_string());
  listener.Wait(absl::Milliseconds(200));  // Connects and listens; nothing is queued yet.
  const NewMention mention = Mention("https://a.example/", "https://b.example/");
  ASSERT_TRUE(store_->Submit(mention).ok());
  EXPECT_TRUE(listener.Wait(absl::Seconds(5))) << "a new pair wakes the workers";
  ASSERT_TRUE(store_->Submit(mention).ok());
  EXPECT_FALSE(listener.Wait(absl::Milliseconds(300))) << "a PENDING repeat queues nothing";
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
  absl::StatusOr<StoredMention> mention = store_->Get(created->mention_id, {});
  ASSERT_TRUE(mention.ok()) << mention.status();
  EXPECT_EQ(mention->mention_id, created->mention_id);
  EXPECT_EQ(mention->source, "https://a.example/x");
  EXPECT_EQ(mention->target, "https://b.example/y");
  EXPECT_EQ(mention->state, MentionState::kPending);
  EXPECT_EQ(mention->reason, "");
  EXPECT_GT(mention->created_at, before);
  EXPECT_GE(mention->updated_at, mention->created_at);
  // Case does not matter in a UUID.
  EXPECT_TRUE(store_->Get(absl::AsciiStrToUpper(created->mention_id), {}).ok());
}

TEST_F(VerifierPgMentionStoreTest, GetUnknownIsNotFoundAndNonUuidIsInvalid) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  EXPECT_TRUE(absl::IsNotFound(store_->Get("00000000-0000-4000-8000-000000000000", {}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Get("1; DROP TABLE mentions", {}).status()));
  EXPECT_TRUE(store_->Ping().ok());
}

TEST_F(VerifierPgMentionStoreTest, SubmitRecordsTheSiteOfTheTarget) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(store_->Submit(Mention("https://a.example/x", "https://b.example/y")).ok());
  EXPECT_EQ(Count(*db, "SELECT count(*) FROM mentions WHERE target_domain = 'b.example'"), 1);
}

// Mentions of b.example/p1 (three) and b.example/p2 (one), with states, types and last changes
// set directly; returns their ids in the order List must return them.
class VerifierPgMentionListTest : public VerifierPgMentionStoreTest {
 protected:
  std::string Add(const testing::TestDatabase& db, const std::string& source,
                  const std::string& target, const std::string& state, const std::string& type,
                  const std::string& updated_at) {
    absl::StatusOr<SubmitResult> result = store_->Submit(Mention(source, target));
    EXPECT_TRUE(result.ok()) << result.status();
    pqxx::connection connection(db.connection_string());
    pqxx::work transaction(connection);
    transaction.exec_params0(
        "UPDATE mentions SET state = $2, type = nullif($3, ''), updated_at = $4::timestamptz "
        "WHERE id = $1::uuid",
        result->mention_id, state, type, updated_at);
    transaction.commit();
    return result->mention_id;
  }

  static MentionQuery ByTarget(const std::string& normalized_target) {
    MentionQuery query;
    query.target_hash = crypto::Sha256(normalized_target);
    return query;
  }

  static std::vector<std::string> Ids(const MentionPage& page) {
    std::vector<std::string> ids;
    for (const StoredMention& mention : page.mentions) {
      ids.push_back(mention.mention_id);
    }
    return ids;
  }
};

TEST_F(VerifierPgMentionListTest, ListsByTargetNewestFirstWithFilters) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string old_like =
      Add(*db, "https://a.example/1", "https://b.example/p1", "VERIFIED", "like",
          "2024-01-01T00:00:00Z");
  const std::string new_reply =
      Add(*db, "https://a.example/2", "https://b.example/p1", "VERIFIED", "reply",
          "2024-03-01T00:00:00Z");
  const std::string pending = Add(*db, "https://a.example/3", "https://b.example/p1", "PENDING", "",
                                  "2024-02-01T00:00:00Z");
  Add(*db, "https://a.example/4", "https://b.example/p2", "VERIFIED", "like",
      "2024-04-01T00:00:00Z");

  absl::StatusOr<MentionPage> all = store_->List(ByTarget("https://b.example/p1"), {});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(Ids(*all), (std::vector<std::string>{new_reply, pending, old_like}));
  EXPECT_EQ(all->next_page_token, "");
  EXPECT_EQ(all->mentions[0].content.type, "reply");
  EXPECT_EQ(all->mentions[0].state, MentionState::kVerified);

  MentionQuery verified = ByTarget("https://b.example/p1");
  verified.state = MentionState::kVerified;
  EXPECT_EQ(Ids(*store_->List(verified, {})), (std::vector<std::string>{new_reply, old_like}));

  MentionQuery likes = ByTarget("https://b.example/p1");
  likes.type = "like";
  EXPECT_EQ(Ids(*store_->List(likes, {})), (std::vector<std::string>{old_like}));

  EXPECT_TRUE(store_->List(ByTarget("https://b.example/none"), {})->mentions.empty());
}

TEST_F(VerifierPgMentionListTest, ListsBySiteAcrossTargetsOnly) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(sites_->AddSite("c.example", {}).ok());
  const TargetRule c_all{"https://c.example/", TargetKind::kPrefix, "c.example"};
  ASSERT_TRUE(sites_->AddTargets(absl::MakeConstSpan(&c_all, 1), {}).ok());
  const std::string p1 = Add(*db, "https://a.example/1", "https://b.example/p1", "VERIFIED",
                             "like", "2024-01-01T00:00:00Z");
  const std::string p2 = Add(*db, "https://a.example/2", "https://b.example/p2", "VERIFIED",
                             "reply", "2024-02-01T00:00:00Z");
  Add(*db, "https://a.example/3", "https://c.example/p1", "VERIFIED", "like",
      "2024-03-01T00:00:00Z");
  MentionQuery query;
  query.domain = "b.example";
  absl::StatusOr<MentionPage> page = store_->List(query, {});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(Ids(*page), (std::vector<std::string>{p2, p1}));
}

TEST_F(VerifierPgMentionListTest, PagesWithATokenAcrossEqualTimes) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  // Five mentions, three of them changed at the same microsecond: the id breaks the tie.
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(Add(*db, "https://a.example/" + std::to_string(i), "https://b.example/p",
                      "VERIFIED", "mention",
                      i < 3 ? "2024-01-01T00:00:00.123456Z" : "2023-01-01T00:00:00Z"));
  }
  MentionQuery query = ByTarget("https://b.example/p");
  query.page_size = 2;
  std::vector<std::string> seen;
  int pages = 0;
  do {
    absl::StatusOr<MentionPage> page = store_->List(query, {});
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_LE(page->mentions.size(), 2u);
    for (const std::string& id : Ids(*page)) {
      seen.push_back(id);
    }
    query.page_token = page->next_page_token;
    ++pages;
  } while (!query.page_token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 5u) << "every mention once, none twice";
  std::vector<std::string> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<std::string> tied(ids.begin(), ids.begin() + 3);
  std::sort(tied.begin(), tied.end());
  EXPECT_EQ(std::vector<std::string>(seen.begin(), seen.begin() + 3), tied)
      << "equal times ordered by id";
}

TEST_F(VerifierPgMentionListTest, RejectsMalformedQueries) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  MentionQuery neither;
  EXPECT_TRUE(absl::IsInvalidArgument(store_->List(neither, {}).status()));
  MentionQuery both = ByTarget("https://b.example/p");
  both.domain = "b.example";
  EXPECT_TRUE(absl::IsInvalidArgument(store_->List(both, {}).status()));
  for (const int size : {0, -1, 1001}) {
    MentionQuery query = ByTarget("https://b.example/p");
    query.page_size = size;
    EXPECT_TRUE(absl::IsInvalidArgument(store_->List(query, {}).status())) << size;
  }
  for (const char* token : {"not base64!", "bTE6", "eHl6", "bTE6MTIzOm5vdC1hLXV1aWQ"}) {
    MentionQuery query = ByTarget("https://b.example/p");
    query.page_token = token;
    EXPECT_TRUE(absl::IsInvalidArgument(store_->List(query, {}).status())) << token;
  }
}

TEST_F(VerifierPgMentionStoreTest, DeadServerIsUnavailable) {
  absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
      PgConnectionPool::Create({"host=/nonexistent/portcullis user=postgres dbname=none", 2,
                                absl::Seconds(1), absl::Seconds(1)});
  ASSERT_TRUE(pool.ok());
  PgMentionStore store(**pool);
  EXPECT_TRUE(absl::IsUnavailable(
      store.Submit(Mention("https://a.example/", "https://b.example/")).status()));
  EXPECT_TRUE(absl::IsUnavailable(store.Get("00000000-0000-4000-8000-000000000000", {}).status()));
  EXPECT_TRUE(absl::IsUnavailable(store.Ping()));
}

// Tenant scoping: a token bound to b.example, beside c.example's mentions.
TEST_F(VerifierPgMentionListTest, ABoundTokenReadsOnlyItsSitesMentions) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  ASSERT_TRUE(sites_->AddSite("c.example", {}).ok());
  const TargetRule c_all{"https://c.example/", TargetKind::kPrefix, "c.example"};
  ASSERT_TRUE(sites_->AddTargets(absl::MakeConstSpan(&c_all, 1), {}).ok());
  const std::string b1 = Add(*db, "https://a.example/1", "https://b.example/p1", "VERIFIED", "like",
                             "2024-01-01T00:00:00Z");
  const std::string c1 = Add(*db, "https://secret.example/2", "https://c.example/p1", "VERIFIED",
                             "reply", "2024-02-01T00:00:00Z");
  const SiteBinding b_only = {"b.example"};

  absl::StatusOr<StoredMention> own = store_->Get(b1, b_only);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(own->source, "https://a.example/1");
  // Another site's mention: PERMISSION_DENIED, naming nothing of it; an unknown id: NOT_FOUND.
  const absl::Status other = store_->Get(c1, b_only).status();
  EXPECT_TRUE(absl::IsPermissionDenied(other)) << other;
  EXPECT_EQ(other.message().find("example"), absl::string_view::npos) << other;
  EXPECT_TRUE(
      absl::IsNotFound(store_->Get("00000000-0000-4000-8000-000000000000", b_only).status()));

  MentionQuery c_site;
  c_site.domain = "c.example";
  EXPECT_TRUE(absl::IsPermissionDenied(store_->List(c_site, b_only).status()));
  MentionQuery unserved_site;
  unserved_site.domain = "nope.example";
  EXPECT_TRUE(absl::IsPermissionDenied(store_->List(unserved_site, b_only).status()));
  EXPECT_TRUE(
      absl::IsPermissionDenied(store_->List(ByTarget("https://c.example/p1"), b_only).status()));
  // A target nobody mentioned yet: an empty page (the store cannot tell whose it is).
  absl::StatusOr<MentionPage> unmentioned =
      store_->List(ByTarget("https://c.example/none"), b_only);
  ASSERT_TRUE(unmentioned.ok()) << unmentioned.status();
  EXPECT_TRUE(unmentioned->mentions.empty());
  // Its own target, filtered to nothing, is an empty page too, not a refusal.
  MentionQuery no_pending = ByTarget("https://b.example/p1");
  no_pending.state = MentionState::kPending;
  absl::StatusOr<MentionPage> filtered = store_->List(no_pending, b_only);
  ASSERT_TRUE(filtered.ok()) << filtered.status();
  EXPECT_TRUE(filtered->mentions.empty());
  MentionQuery b_site;
  b_site.domain = "b.example";
  absl::StatusOr<MentionPage> own_page = store_->List(b_site, b_only);
  ASSERT_TRUE(own_page.ok()) << own_page.status();
  EXPECT_EQ(Ids(*own_page), (std::vector<std::string>{b1}));

  // Unbound sees every site; a token bound to both sites sees both.
  for (const SiteBinding& binding : {SiteBinding{}, SiteBinding{"c.example", "b.example"}}) {
    EXPECT_TRUE(store_->Get(b1, binding).ok());
    absl::StatusOr<StoredMention> theirs = store_->Get(c1, binding);
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    EXPECT_EQ(theirs->source, "https://secret.example/2");
    absl::StatusOr<MentionPage> c_page = store_->List(c_site, binding);
    ASSERT_TRUE(c_page.ok()) << c_page.status();
    EXPECT_EQ(Ids(*c_page), (std::vector<std::string>{c1}));
    absl::StatusOr<MentionPage> by_target = store_->List(ByTarget("https://c.example/p1"), binding);
    ASSERT_TRUE(by_target.ok()) << by_target.status();
    EXPECT_EQ(Ids(*by_target), (std::vector<std::string>{c1}));
  }
}

// A mention stored before target_domain was recorded belongs to no site: only an unbound token
// reads it.
TEST_F(VerifierPgMentionListTest, AMentionWithoutASiteIsReadOnlyUnbound) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::string id = Add(*db, "https://a.example/1", "https://b.example/p1", "VERIFIED", "like",
                             "2024-01-01T00:00:00Z");
  {
    pqxx::connection connection(db->connection_string());
    pqxx::work transaction(connection);
    transaction.exec0("UPDATE mentions SET target_domain = NULL");
    transaction.commit();
  }
  EXPECT_TRUE(store_->Get(id, {}).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(store_->Get(id, {"b.example"}).status()));
  EXPECT_TRUE(absl::IsPermissionDenied(
      store_->List(ByTarget("https://b.example/p1"), {"b.example"}).status()));
}

}  // namespace
}  // namespace portcullis::verifier::store
