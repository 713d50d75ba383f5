#include "verifier-service/src/store/pg_delivery_store.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"
#include "verifier-service/src/store/pg_site_store.h"

namespace portcullis::verifier::store {
namespace {

// The outbox (migrations/0013_deliveries.sql): which change of a mention or an ingest row queues
// which event, and the store's claims, leases, attempts, replays and scoping.
class VerifierPgDeliveryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
    db_ = std::move(db);
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(db_->connection_string()).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({db_->connection_string(), 2, absl::Seconds(2), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgDeliveryStore>(*pool_);
    PgSiteStore sites(*pool_);
    for (const char* site : {"a.example", "b.example"}) {
      ASSERT_TRUE(sites.AddSite(site, {}).ok());
    }
  }

  std::string Subscribe(const std::string& site, std::vector<std::string> events,
                        const std::string& publisher = "") {
    NewSubscription subscription;
    subscription.site = site;
    subscription.publisher = publisher;
    subscription.url = "http://93.184.216.34/hook";
    subscription.events = std::move(events);
    subscription.signature_version = "v1";
    subscription.signing_key = std::string(24, 'k');
    absl::StatusOr<SubscriptionRecord> created = store_->CreateSubscription(subscription, {});
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->id : "";
  }

  void Exec(const std::string& sql) {
    pqxx::connection connection(db_->connection_string());
    pqxx::work work(connection);
    work.exec0(sql);
    work.commit();
  }

  long long Count(const std::string& sql) {
    pqxx::connection connection(db_->connection_string());
    pqxx::nontransaction work(connection);
    return work.exec1(sql)[0].as<long long>();
  }

  // The event types queued so far, in order.
  std::vector<std::string> Events() {
    pqxx::connection connection(db_->connection_string());
    pqxx::nontransaction work(connection);
    std::vector<std::string> events;
    for (const pqxx::row& row : work.exec("SELECT event_type FROM deliveries ORDER BY seq")) {
      events.push_back(row[0].as<std::string>());
    }
    return events;
  }

  static std::string InsertMention(const std::string& site, const std::string& source,
                                   const std::string& state = "PENDING") {
    return absl::StrCat(
        "INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, state) "
        "VALUES ('",
        source, "', 'https://", site, "/p', sha256('", source, "'), sha256('", site, "'), '", site,
        "', '", state, "')");
  }

  std::unique_ptr<testing::TestDatabase> db_;
  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgDeliveryStore> store_;
};

TEST_F(VerifierPgDeliveryStoreTest, EachMentionChangeQueuesExactlyTheEventThatHappened) {
  Subscribe("a.example",
            {"mention.verified", "mention.updated", "mention.removed", "mention.failed"});
  const std::string where = "WHERE source = 'https://s.example/1'";
  Exec(InsertMention("a.example", "https://s.example/1"));
  EXPECT_TRUE(Events().empty());  // PENDING: nothing happened yet
  Exec("UPDATE mentions SET state = 'VERIFIED', content_hash = sha256('one') " + where);
  Exec("UPDATE mentions SET updated_at = now(), content_hash = sha256('one') " + where);
  EXPECT_EQ(Events(), (std::vector<std::string>{"mention.verified"}));  // unchanged: none
  Exec("UPDATE mentions SET content_hash = sha256('two') " + where);
  Exec("UPDATE mentions SET review = 'HIDDEN' " + where);
  Exec("UPDATE mentions SET review = 'UNREVIEWED' " + where);
  Exec("UPDATE mentions SET state = 'FAILED', reason = 'no_link' " + where);
  EXPECT_EQ(Events(),
            (std::vector<std::string>{"mention.verified", "mention.updated", "mention.removed",
                                      "mention.verified", "mention.removed"}));
  // A new pair that fails; a blocked or erased one is not news; a VERIFIED row deleted is.
  Exec(InsertMention("a.example", "https://s.example/2"));
  Exec(
      "UPDATE mentions SET state = 'FAILED', reason = 'http_404' "
      "WHERE source = 'https://s.example/2'");
  Exec(
      "INSERT INTO mentions (source, target, source_hash, target_hash, target_domain, state, "
      "reason) VALUES ('https://s.example/3', 'https://a.example/p', sha256('3'), sha256('t'), "
      "'a.example', 'FAILED', 'blocked')");
  Exec(InsertMention("a.example", "https://s.example/4", "VERIFIED"));
  Exec("DELETE FROM mentions WHERE source = 'https://s.example/4'");
  const std::vector<std::string> events = Events();
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(std::vector<std::string>(events.begin() + 5, events.end()),
            (std::vector<std::string>{"mention.failed", "mention.verified", "mention.removed"}));
  // Another site's mentions go to nobody; a rolled-back change leaves no event.
  Exec(InsertMention("b.example", "https://s.example/5", "VERIFIED"));
  {
    pqxx::connection connection(db_->connection_string());
    pqxx::work work(connection);
    work.exec0(InsertMention("a.example", "https://s.example/6", "VERIFIED"));
    work.abort();
  }
  EXPECT_EQ(Events().size(), 8u);
  EXPECT_EQ(Count("SELECT count(DISTINCT webhook_id) FROM deliveries"), 8);
}

// A block changes no mention row: the block itself announces what it hides (and its removal
// what it shows again), once per mention, whichever entries overlap.
TEST_F(VerifierPgDeliveryStoreTest, BlocksAnnounceWhatTheyHideAndTheirRemovalWhatTheyShowAgain) {
  Subscribe("a.example", {"mention.verified", "mention.removed"});
  Exec(InsertMention("a.example", "https://s.example/1", "VERIFIED"));
  Exec(InsertMention("a.example", "https://t.example/1", "VERIFIED"));
  Exec(InsertMention("b.example", "https://s.example/2", "VERIFIED"));
  ASSERT_EQ(Events(), (std::vector<std::string>{"mention.verified", "mention.verified"}));
  Exec("INSERT INTO source_blocks (kind, value) VALUES ('DOMAIN', 's.example')");
  EXPECT_EQ(Events().size(), 3u);
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE event_type = 'mention.removed' AND "
                  "body::jsonb -> 'data' ->> 'wm-source' = 'https://s.example/1' AND "
                  "body::jsonb -> 'data' ->> 'reason' = 'blocked'"),
            1);
  // Already blocked: a second entry hides nothing new, and removing one of the two shows nothing.
  Exec("INSERT INTO source_blocks (kind, value) VALUES ('PREFIX', 'https://s.example/')");
  Exec("DELETE FROM source_blocks WHERE kind = 'DOMAIN'");
  EXPECT_EQ(Events().size(), 3u);
  // A block of another site's reaches only that site's mentions.
  Exec(
      "INSERT INTO source_blocks (site_id, kind, value) SELECT id, 'DOMAIN', 't.example' "
      "FROM sites WHERE domain = 'b.example'");
  EXPECT_EQ(Events().size(), 3u);
  // The last entry blocking it gone: shown again.
  Exec("DELETE FROM source_blocks WHERE kind = 'PREFIX'");
  EXPECT_EQ(Events(), (std::vector<std::string>{"mention.verified", "mention.verified",
                                                "mention.removed", "mention.verified"}));
}

// A block's trigger looks at mentions only for a subscription to the event it would queue: one
// to mention.verified alone hears nothing of the block, and the block's removal.
TEST_F(VerifierPgDeliveryStoreTest, ABlockQueuesOnlyTheEventItsSubscriptionAskedFor) {
  Subscribe("a.example", {"mention.verified"});
  Exec(InsertMention("a.example", "https://s.example/1", "VERIFIED"));
  ASSERT_EQ(Events(), (std::vector<std::string>{"mention.verified"}));
  Exec("INSERT INTO source_blocks (kind, value) VALUES ('DOMAIN', 's.example')");
  EXPECT_EQ(Events().size(), 1u);
  Exec("DELETE FROM source_blocks WHERE kind = 'DOMAIN'");
  EXPECT_EQ(Events(), (std::vector<std::string>{"mention.verified", "mention.verified"}));
}

TEST_F(VerifierPgDeliveryStoreTest, OnlyTheSubscribedEventsOfTheSubscribedScopeAreQueued) {
  Subscribe("a.example", {"mention.removed"});
  Subscribe("", {"ingest.accepted"}, "feeds.example");
  Exec(InsertMention("a.example", "https://s.example/1", "VERIFIED"));
  EXPECT_TRUE(Events().empty());
  Exec(
      "INSERT INTO ingest_items (publisher, item_id, content_hash, canonical_body, "
      "signature_valid) VALUES ('feeds.example', 'i1', 'h', convert_to('{\"id\":\"i1\"}', "
      "'UTF8'), true), ('other.example', 'i2', 'h', convert_to('{\"id\":\"i2\"}', 'UTF8'), "
      "true)");
  EXPECT_EQ(Events(), (std::vector<std::string>{"ingest.accepted"}));
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE body::jsonb -> 'data' ->> 'item_id' = "
                  "'i1' AND body::jsonb -> 'data' -> 'item' ->> 'id' = 'i1'"),
            1);
  // A quarantined delivery is news only to a subscription that asked for it.
  const std::string dead_letter =
      "INSERT INTO dead_letters (publisher, item_id, content_hash, reason, signature_header, "
      "message_id, timestamp_header, raw_body, canonical_body) VALUES ('feeds.example', 'i3', "
      "'h', 'malformed_signature', 'v1,x', 'msg_1', '1', '\\x7b7d', '\\x7b7d')";
  Exec(dead_letter);
  EXPECT_EQ(Events(), (std::vector<std::string>{"ingest.accepted"}));
  Subscribe("", {"ingest.quarantined"}, "feeds.example");
  Exec(dead_letter);
  EXPECT_EQ(Events(), (std::vector<std::string>{"ingest.accepted", "ingest.quarantined"}));
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE body::jsonb -> 'data' ->> 'reason' = "
                  "'malformed_signature'"),
            1);
}

TEST_F(VerifierPgDeliveryStoreTest, ClaimsLeaseAndRecordAttemptsAndLostLeasesRecordNothing) {
  const std::string subscription = Subscribe("a.example", {"mention.verified"});
  ASSERT_TRUE(store_->QueuePing(subscription, {}).ok());
  ASSERT_TRUE(store_->QueuePing(subscription, {}).ok());
  absl::StatusOr<std::vector<ClaimedDelivery>> first = store_->Claim("pod-1", 1, absl::Seconds(30));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].attempts, 1);
  EXPECT_EQ((*first)[0].signing_key, std::string(24, 'k'));
  EXPECT_EQ((*first)[0].url, "http://93.184.216.34/hook");
  // Another pod gets the other one, never the leased one.
  absl::StatusOr<std::vector<ClaimedDelivery>> second =
      store_->Claim("pod-2", 10, absl::Seconds(30));
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_NE((*second)[0].id, (*first)[0].id);
  EXPECT_TRUE(store_->Claim("pod-3", 10, absl::Seconds(30))->empty());

  AttemptRecord retry;
  retry.delivery_id = (*first)[0].id;
  retry.subscription_id = subscription;
  retry.state = "pending";
  retry.next_attempt_at = absl::Now() - absl::Seconds(1);
  retry.status_code = 503;
  retry.latency = absl::Milliseconds(12);
  EXPECT_EQ(*store_->RecordAttempts("pod-2", {retry}), 0);  // not pod-2's
  EXPECT_EQ(*store_->RecordAttempts("pod-1", {retry}), 1);
  absl::StatusOr<std::vector<ClaimedDelivery>> again =
      store_->Claim("pod-3", 10, absl::Seconds(30));
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].id, (*first)[0].id);
  EXPECT_EQ((*again)[0].webhook_id, (*first)[0].webhook_id);
  EXPECT_EQ((*again)[0].attempts, 2);

  // pod-2 dies: its lease runs out and the delivery is claimed again.
  Exec(
      "UPDATE deliveries SET lease_expires_at = now() - interval '1 second' "
      "WHERE lease_owner = 'pod-2'");
  absl::StatusOr<std::vector<ClaimedDelivery>> taken =
      store_->Claim("pod-4", 10, absl::Seconds(30));
  ASSERT_EQ(taken->size(), 1u);
  EXPECT_EQ((*taken)[0].id, (*second)[0].id);

  absl::StatusOr<std::vector<OutboundDelivery>> listed =
      store_->ListDeliveries(subscription, 10, {});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1].last_status_code, 503);
  EXPECT_EQ((*listed)[1].last_latency_ms, 12);
  absl::StatusOr<DeliveryQueueStats> stats = store_->QueueStats(100);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->depth, 2);
  EXPECT_GE(stats->oldest_age, absl::ZeroDuration());
}

TEST_F(VerifierPgDeliveryStoreTest, GoneDisablesTheSubscriptionAndFailsWhatItHadQueued) {
  const std::string subscription = Subscribe("a.example", {"mention.verified"});
  ASSERT_TRUE(store_->QueuePing(subscription, {}).ok());
  absl::StatusOr<std::vector<ClaimedDelivery>> claimed =
      store_->Claim("pod-1", 1, absl::Seconds(30));
  ASSERT_EQ(claimed->size(), 1u);
  ASSERT_TRUE(store_->QueuePing(subscription, {}).ok());
  AttemptRecord gone;
  gone.delivery_id = (*claimed)[0].id;
  gone.subscription_id = subscription;
  gone.state = "failed";
  gone.next_attempt_at = absl::Now();
  gone.status_code = 410;
  gone.disable_reason = "destination answered 410 Gone";
  ASSERT_EQ(*store_->RecordAttempts("pod-1", {gone}), 1);
  absl::StatusOr<std::vector<SubscriptionRecord>> listed = store_->ListSubscriptions("", {});
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].state, "disabled");
  EXPECT_EQ((*listed)[0].disabled_reason, "destination answered 410 Gone");
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE state = 'failed'"), 2);
  ASSERT_TRUE(store_->QueuePing(subscription, {}).ok());
  EXPECT_TRUE(store_->Claim("pod-1", 10, absl::Seconds(30))->empty());
  // No new event reaches it either.
  Exec(InsertMention("a.example", "https://s.example/1", "VERIFIED"));
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries"), 3);
}

TEST_F(VerifierPgDeliveryStoreTest, ReplayQueuesAgainFromTheStartAndADryRunOnlyCounts) {
  const std::string subscription = Subscribe("a.example", {"mention.verified"});
  ASSERT_TRUE(store_->QueuePing(subscription, {}).ok());
  absl::StatusOr<std::vector<ClaimedDelivery>> claimed =
      store_->Claim("pod-1", 1, absl::Seconds(30));
  AttemptRecord failed;
  failed.delivery_id = (*claimed)[0].id;
  failed.subscription_id = subscription;
  failed.state = "failed";
  failed.next_attempt_at = absl::Now();
  failed.status_code = 500;
  ASSERT_EQ(*store_->RecordAttempts("pod-1", {failed}), 1);
  ReplayFilter filter;
  filter.subscription_id = subscription;
  filter.failed_only = true;
  filter.dry_run = true;
  EXPECT_EQ(*store_->Replay(filter, {}), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM deliveries WHERE state = 'failed'"), 1);
  filter.event_type = "mention.verified";
  EXPECT_EQ(*store_->Replay(filter, {}), 0);
  filter.event_type.clear();
  filter.since = absl::Now() + absl::Hours(1);
  EXPECT_EQ(*store_->Replay(filter, {}), 0);
  filter.since.reset();
  filter.dry_run = false;
  EXPECT_EQ(*store_->Replay(filter, {}), 1);
  absl::StatusOr<std::vector<ClaimedDelivery>> again = store_->Claim("pod-1", 1, absl::Seconds(30));
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].webhook_id, (*claimed)[0].webhook_id);
  EXPECT_EQ((*again)[0].attempts, 1);
  ReplayFilter by_id;
  by_id.delivery_id = "00000000-0000-4000-8000-000000000000";
  EXPECT_TRUE(absl::IsNotFound(store_->Replay(by_id, {}).status()));
}

TEST_F(VerifierPgDeliveryStoreTest, ABoundCallerSeesOnlyItsSitesSubscriptions) {
  const std::string a = Subscribe("a.example", {"mention.verified"});
  const std::string b = Subscribe("b.example", {"mention.verified"});
  Subscribe("", {"ingest.accepted"}, "feeds.example");
  const SiteBinding only_a = {"a.example"};
  absl::StatusOr<std::vector<SubscriptionRecord>> listed = store_->ListSubscriptions("", only_a);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, a);
  EXPECT_TRUE(absl::IsNotFound(store_->QueuePing(b, only_a).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->RemoveSubscription(b, only_a).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->ListDeliveries(b, 10, only_a).status()));
  EXPECT_TRUE(absl::IsPermissionDenied(store_->ListSubscriptions("b.example", only_a).status()));
  NewSubscription publisher;
  publisher.publisher = "feeds.example";
  publisher.url = "http://93.184.216.34/";
  publisher.events = {"ingest.accepted"};
  publisher.signature_version = "v1";
  publisher.signing_key = std::string(24, 'k');
  EXPECT_TRUE(absl::IsPermissionDenied(store_->CreateSubscription(publisher, only_a).status()));
  NewSubscription unserved = publisher;
  unserved.publisher.clear();
  unserved.site = "c.example";
  EXPECT_TRUE(absl::IsNotFound(store_->CreateSubscription(unserved, {}).status()));
  EXPECT_EQ(*store_->RemoveSubscription(a, only_a), 0);
  EXPECT_EQ(store_->ListSubscriptions("", {})->size(), 2u);
}

}  // namespace
}  // namespace portcullis::verifier::store
