#include "verifier-service/src/store/pg_ingest_store.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pqxx/pqxx"
#include "tests/support/test_database.h"
#include "verifier-service/src/store/migrator.h"

namespace portcullis::verifier::store {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

std::string Hash(int n) {
  std::string hash = absl::StrCat(n);
  return std::string(64 - hash.size(), '0') + hash;
}

NewDecision Decision(const std::string& publisher, int n, StoredDecision decision,
                     bool signature_valid, absl::Time now = kNow,
                     absl::Duration retention = absl::Hours(1)) {
  NewDecision next;
  next.decision.publisher = publisher;
  next.decision.content_hash = Hash(n);
  next.decision.item_id = absl::StrCat("item-", n);
  next.decision.decision = decision;
  next.decision.reason = decision == StoredDecision::kDropped       ? "unverified_synthetic_content"
                         : decision == StoredDecision::kQuarantined ? "missing_provenance_id"
                                                                    : "";
  next.decision.signature_valid = signature_valid;
  next.decision.decided_at = now;
  next.decision.expires_at = now + retention;
  next.delivery.publisher = publisher;
  next.delivery.item_id = next.decision.item_id;
  next.delivery.content_hash = next.decision.content_hash;
  next.delivery.raw_body = std::string("{\"id\":\"x\"}\0binary", 17);
  next.delivery.canonical_body = "{\"id\":\"x\"}";
  next.delivery.signature_header = "v1a,abc";
  next.delivery.message_id = "m";
  next.delivery.timestamp = "";
  next.delivery.is_synthetic = false;
  next.delivery.digital_source_type = "digitalCapture";
  return next;
}

class VerifierPgIngestStoreTest : public ::testing::Test {
 protected:
  void Open(const std::string& url) {
    url_ = url;
    absl::StatusOr<std::vector<Migration>> migrations = BuiltinMigrations();
    ASSERT_TRUE(migrations.ok()) << migrations.status();
    ASSERT_TRUE(Migrator(*migrations).Apply(url).ok());
    absl::StatusOr<std::unique_ptr<PgConnectionPool>> pool =
        PgConnectionPool::Create({url, 8, absl::Seconds(5), absl::Seconds(5)});
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    store_ = std::make_unique<PgIngestStore>(*pool_);
  }

  RecordResult RecordOk(const NewDecision& next, absl::Time now = kNow) {
    absl::StatusOr<RecordResult> result = store_->Record(next, now);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RecordResult();
  }

  // RecordBatch on a connection of its own; one result per item of `batch`, each expected ok.
  std::vector<RecordResult> RecordBatchOk(const std::vector<DecisionAt>& batch) {
    pqxx::connection connection(url_);
    std::vector<absl::StatusOr<RecordResult>> results = store_->RecordBatch(connection, batch);
    EXPECT_EQ(results.size(), batch.size());
    results.resize(batch.size(), RecordResult());
    std::vector<RecordResult> recorded;
    for (absl::StatusOr<RecordResult>& result : results) {
      EXPECT_TRUE(result.ok()) << result.status();
      recorded.push_back(result.ok() ? *std::move(result) : RecordResult());
    }
    return recorded;
  }

  int64_t Count(const std::string& sql) {
    pqxx::connection connection(url_);
    pqxx::nontransaction transaction(connection);
    return transaction.exec1(sql)[0].as<int64_t>();
  }

  std::string url_;
  std::unique_ptr<PgConnectionPool> pool_;
  std::unique_ptr<PgIngestStore> store_;
};

TEST_F(VerifierPgIngestStoreTest, RecordsAcceptedWithItsItemAndAnswersDuplicates) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  RecordResult first = RecordOk(Decision("feed", 1, StoredDecision::kAccepted, false));
  EXPECT_TRUE(first.recorded);
  RecordResult second = RecordOk(Decision("feed", 1, StoredDecision::kDropped, false));
  EXPECT_FALSE(second.recorded);
  EXPECT_EQ(second.decision.decision, StoredDecision::kAccepted);
  EXPECT_EQ(second.decision.item_id, "item-1");
  EXPECT_EQ(second.decision.expires_at, kNow + absl::Hours(1));

  absl::StatusOr<std::optional<DecisionRecord>> found = store_->FindDecision("feed", Hash(1), kNow);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->decision, StoredDecision::kAccepted);
  found = store_->FindDecision("feed", Hash(1), kNow + absl::Hours(1));
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value()) << "expired decisions are not duplicates";
  found = store_->FindDecision("other", Hash(1), kNow);
  EXPECT_FALSE(found->has_value());

  absl::StatusOr<std::vector<AcceptedItemRecord>> items = store_->ListAcceptedItems(0, 10);
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ((*items)[0].canonical_body, "{\"id\":\"x\"}");
  EXPECT_EQ((*items)[0].item_id, "item-1");
}

TEST_F(VerifierPgIngestStoreTest, AnAcceptedItemKeepsItsMediaVerification) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  NewDecision with_media = Decision("feed", 1, StoredDecision::kAccepted, false);
  with_media.media_verification.push_back({"image/jpeg",
                                           "valid",
                                           {"claimSignature.validated", "assertion.dataHash.match"},
                                           "CN=Trusted, O=\"Quote\"",
                                           "gen/1",
                                           "trainedAlgorithmicMedia",
                                           true});
  with_media.media_verification.push_back({"image/png", "no_manifest", {}, "", "", "", false});
  RecordOk(with_media);
  // The replay path (a separate insert) keeps it too.
  NewDecision replayed = Decision("feed", 2, StoredDecision::kQuarantined, false);
  const RecordResult quarantined = RecordOk(replayed);
  NewDecision accepted = Decision("feed", 2, StoredDecision::kAccepted, false);
  accepted.replay_of = quarantined.decision.dead_letter_id;
  accepted.media_verification = with_media.media_verification;
  EXPECT_TRUE(RecordOk(accepted).recorded);
  RecordOk(Decision("feed", 3, StoredDecision::kAccepted, false));

  absl::StatusOr<std::vector<AcceptedItemRecord>> items = store_->ListAcceptedItems(0, 10);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 3u);
  for (int i : {0, 1}) {
    const std::vector<MediaVerificationRecord>& media = (*items)[i].media;
    ASSERT_EQ(media.size(), 2u) << i;
    EXPECT_EQ(media[0].content_type, "image/jpeg");
    EXPECT_EQ(media[0].verdict, "valid");
    EXPECT_EQ(media[0].status_codes,
              (std::vector<std::string>{"claimSignature.validated", "assertion.dataHash.match"}));
    EXPECT_EQ(media[0].signer_subject, "CN=Trusted, O=\"Quote\"");
    EXPECT_EQ(media[0].claim_generator, "gen/1");
    EXPECT_EQ(media[0].digital_source_type, "trainedAlgorithmicMedia");
    EXPECT_TRUE(media[0].synthetic);
    EXPECT_EQ(media[1].verdict, "no_manifest");
    EXPECT_FALSE(media[1].synthetic);
  }
  EXPECT_TRUE((*items)[2].media.empty());
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items WHERE media IS NULL"), 1);
}

TEST_F(VerifierPgIngestStoreTest, ReplacementRules) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  // An unsigned drop is replaced by a validly signed decision...
  RecordOk(Decision("feed", 1, StoredDecision::kDropped, false));
  EXPECT_TRUE(RecordOk(Decision("feed", 1, StoredDecision::kAccepted, true)).recorded);
  // ...but an accepted one is not, nor by an unsigned one.
  EXPECT_FALSE(RecordOk(Decision("feed", 1, StoredDecision::kAccepted, true)).recorded);
  RecordOk(Decision("feed", 2, StoredDecision::kDropped, false));
  EXPECT_FALSE(RecordOk(Decision("feed", 2, StoredDecision::kAccepted, false)).recorded);
  // A signed drop is not replaced.
  RecordOk(Decision("feed", 3, StoredDecision::kDropped, true));
  EXPECT_FALSE(RecordOk(Decision("feed", 3, StoredDecision::kAccepted, true)).recorded);
  // An expired decision is replaced by anything.
  RecordOk(Decision("feed", 4, StoredDecision::kAccepted, true));
  EXPECT_TRUE(RecordOk(Decision("feed", 4, StoredDecision::kDropped, false,
                                kNow + absl::Hours(2)),
                       kNow + absl::Hours(2))
                  .recorded);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 4);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 2);
}

// A drop of publisher "feed" to keep for a day under a ledger cap of `cap` bytes.
NewDecision KeptDrop(int n, int64_t cap, absl::Time now = kNow) {
  NewDecision next = Decision("feed", n, StoredDecision::kDropped, false, now);
  next.keep_drop_for = absl::Hours(24);
  next.drop_ledger_max_bytes = cap;
  return next;
}

TEST_F(VerifierPgIngestStoreTest, ARecordedDropIsKeptInTheLedgerWithinItsCap) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const int64_t one = DropLedgerBytes(KeptDrop(1, 0).delivery);
  ASSERT_GT(one, 0);
  // Room for two.
  const int64_t cap = 2 * one + one / 2;
  EXPECT_TRUE(RecordOk(KeptDrop(1, cap)).drop_kept);
  // A duplicate is no new drop: nothing kept.
  RecordResult duplicate = RecordOk(KeptDrop(1, cap));
  EXPECT_FALSE(duplicate.recorded);
  EXPECT_FALSE(duplicate.drop_kept);
  // Without keep_drop_for: not kept.
  EXPECT_FALSE(RecordOk(Decision("feed", 2, StoredDecision::kDropped, false)).drop_kept);
  EXPECT_TRUE(RecordOk(KeptDrop(3, cap, kNow + absl::Seconds(1))).drop_kept);
  // Over the cap: recorded, not kept; the older ones stay.
  RecordResult over = RecordOk(KeptDrop(4, cap));
  EXPECT_TRUE(over.recorded);
  EXPECT_FALSE(over.drop_kept);
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 2);
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage WHERE publisher = 'feed'"), 2 * one);
  // A drop bigger than the whole cap is never kept.
  EXPECT_FALSE(RecordOk(KeptDrop(5, one - 1)).drop_kept);

  // The ledger, oldest first, with everything re-evaluation needs.
  absl::StatusOr<std::vector<DroppedDeliveryRecord>> drops =
      store_->ListDrops({"feed", "", absl::InfinitePast()}, std::nullopt, 10);
  ASSERT_TRUE(drops.ok()) << drops.status();
  ASSERT_EQ(drops->size(), 2u);
  const DroppedDeliveryRecord& first = (*drops)[0];
  EXPECT_EQ(first.delivery.item_id, "item-1");
  EXPECT_EQ(first.reason, "unverified_synthetic_content");
  EXPECT_EQ(first.delivery.raw_body, std::string("{\"id\":\"x\"}\0binary", 17));
  EXPECT_EQ(first.delivery.signature_header, "v1a,abc");
  EXPECT_EQ(first.delivery.is_synthetic, false);
  EXPECT_EQ(first.received_at, kNow);
  EXPECT_EQ(first.expires_at, kNow + absl::Hours(24));
  // Filters and pages.
  drops = store_->ListDrops({"feed", "other_reason", absl::InfinitePast()}, std::nullopt, 10);
  ASSERT_TRUE(drops.ok());
  EXPECT_TRUE(drops->empty());
  drops = store_->ListDrops({"feed", "", kNow + absl::Seconds(2)}, std::nullopt, 10);
  ASSERT_TRUE(drops.ok());
  EXPECT_TRUE(drops->empty());
  drops = store_->ListDrops({"feed", "", absl::InfinitePast()}, std::nullopt, 1);
  ASSERT_TRUE(drops.ok() && drops->size() == 1u);
  drops = store_->ListDrops({"feed", "", absl::InfinitePast()},
                            DropPosition{(*drops)[0].received_at, (*drops)[0].drop_id}, 10);
  ASSERT_TRUE(drops.ok());
  ASSERT_EQ(drops->size(), 1u);
  EXPECT_EQ((*drops)[0].delivery.item_id, "item-3");

  // Deleting rows gives their bytes back.
  Count("WITH d AS (DELETE FROM dropped_deliveries WHERE item_id = 'item-1' RETURNING 1) "
        "SELECT count(*) FROM d");
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage WHERE publisher = 'feed'"), one);
}

TEST_F(VerifierPgIngestStoreTest, BatchesKeepTheirDropsInTheSameTransaction) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const std::vector<DecisionAt> batch = {
      {KeptDrop(1, 1 << 20), kNow},
      {Decision("feed", 2, StoredDecision::kAccepted, false), kNow},
      {KeptDrop(3, 1 << 20), kNow},
      {KeptDrop(1, 1 << 20), kNow}};
  const std::vector<RecordResult> results = RecordBatchOk(batch);
  EXPECT_TRUE(results[0].drop_kept);
  EXPECT_FALSE(results[1].drop_kept);
  EXPECT_TRUE(results[2].drop_kept);
  EXPECT_FALSE(results[3].drop_kept) << "the copy is a duplicate";
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 2);
}

// A batch of plain decisions is written by one statement (kRecordDecisions): each decision is
// still judged on its own, at its own `now`, and what an accepted item carries arrives byte for
// byte.
TEST_F(VerifierPgIngestStoreTest, APlainBatchDecidesEachItemAsIfItCameAlone) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  RecordOk(Decision("feed", 1, StoredDecision::kAccepted, false));  // Stays: a duplicate.
  RecordOk(Decision("feed", 2, StoredDecision::kDropped, false));   // Expires after 1 h.
  NewDecision binary = Decision("feed", 3, StoredDecision::kAccepted, true);
  binary.delivery.canonical_body = std::string("{\"a\":\"\0\\\"\xc3\xbc{}\"}", 15);
  NewDecision media = Decision("other", 4, StoredDecision::kAccepted, false);
  media.media_verification.push_back({"image/jpeg", "valid", {"claimSignature.validated"},
                                      "CN=signer", "cam/1.0", "digitalCapture", false});
  const absl::Time later = kNow + absl::Hours(2);
  const std::vector<DecisionAt> batch = {
      {Decision("feed", 1, StoredDecision::kAccepted, false), kNow},
      {Decision("feed", 2, StoredDecision::kAccepted, false, later), later},
      {binary, kNow},
      {media, kNow},
      {Decision("feed", 5, StoredDecision::kDropped, false), kNow}};
  const std::vector<RecordResult> results = RecordBatchOk(batch);
  EXPECT_FALSE(results[0].recorded) << "the stored acceptance stays";
  EXPECT_EQ(results[0].decision.item_id, "item-1");
  EXPECT_TRUE(results[1].recorded) << "judged at its own now, the stored drop has expired";
  EXPECT_TRUE(results[2].recorded);
  EXPECT_TRUE(results[3].recorded);
  EXPECT_TRUE(results[4].recorded);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 4) << "items 1, 2, 3 and 4";
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items WHERE content_hash = '" + Hash(5) + "'"), 0);
  absl::StatusOr<std::vector<AcceptedItemRecord>> items = store_->ListAcceptedItems(0, 10);
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 4u);
  for (const AcceptedItemRecord& item : *items) {
    if (item.item_id == "item-3") {
      EXPECT_EQ(item.canonical_body, binary.delivery.canonical_body);
      EXPECT_TRUE(item.signature_valid);
    }
    if (item.item_id == "item-4") {
      ASSERT_EQ(item.media.size(), 1u);
      EXPECT_EQ(item.media[0].signer_subject, "CN=signer");
    }
  }
}

// Issue 21: a repeat whose stored decision stays is answered from a read. The upsert would lock
// the row even when it keeps it (its xmax, a WAL record and a flush at commit); a delivery that
// may replace the stored decision still goes through it, in the same batch.
TEST_F(VerifierPgIngestStoreTest, ARepeatInABatchIsAnsweredWithoutLockingItsRow) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  RecordOk(Decision("feed", 1, StoredDecision::kAccepted, false));
  RecordOk(Decision("feed", 2, StoredDecision::kDropped, false));
  const std::vector<DecisionAt> batch = {
      {Decision("feed", 1, StoredDecision::kAccepted, false), kNow},
      {Decision("feed", 2, StoredDecision::kAccepted, false), kNow},
      {Decision("feed", 2, StoredDecision::kAccepted, true), kNow},
      {Decision("feed", 1, StoredDecision::kAccepted, true), kNow}};
  const std::vector<RecordResult> results = RecordBatchOk(batch);
  EXPECT_FALSE(results[0].recorded);
  EXPECT_EQ(results[0].decision.decision, StoredDecision::kAccepted);
  EXPECT_FALSE(results[1].recorded) << "an unsigned delivery does not replace an unsigned drop";
  EXPECT_EQ(results[1].decision.decision, StoredDecision::kDropped);
  EXPECT_TRUE(results[2].recorded) << "a validly signed one does";
  EXPECT_FALSE(results[3].recorded) << "nothing replaces an acceptance";
  EXPECT_EQ(results[3].decision.item_id, "item-1");
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 2) << "items 1 and 2";
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions WHERE content_hash = '" + Hash(1) +
                  "' AND xmax::text::bigint = 0"),
            1)
      << "the repeats of item 1 locked its row";
}

TEST_F(VerifierPgIngestStoreTest, AReevaluationAcceptsOnceAndEmptiesTheLedgerOfThatItem) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  RecordOk(KeptDrop(1, 1 << 20));
  absl::StatusOr<std::vector<DroppedDeliveryRecord>> drops =
      store_->ListDrops({"feed", "", absl::InfinitePast()}, std::nullopt, 10);
  ASSERT_TRUE(drops.ok() && drops->size() == 1u);
  // An unsigned acceptance (the publisher's rules changed) replaces the drop it re-evaluates.
  NewDecision accepted = Decision("feed", 1, StoredDecision::kAccepted, false);
  accepted.reevaluation_of = (*drops)[0].drop_id;
  RecordResult result = RecordOk(accepted);
  EXPECT_TRUE(result.recorded);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM dropped_deliveries"), 0);
  EXPECT_EQ(Count("SELECT bytes FROM drop_ledger_usage"), 0);
  // Again (a concurrent re-evaluation of the same row): the acceptance stays, one item.
  result = RecordOk(accepted);
  EXPECT_FALSE(result.recorded);
  EXPECT_EQ(result.decision.decision, StoredDecision::kAccepted);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
  // Only an acceptance may re-evaluate.
  NewDecision dropped = Decision("feed", 1, StoredDecision::kDropped, false);
  dropped.reevaluation_of = (*drops)[0].drop_id;
  EXPECT_TRUE(absl::IsInvalidArgument(store_->Record(dropped, kNow).status()));
}

TEST_F(VerifierPgIngestStoreTest, QuarantineKeepsTheDeliveryAndReplayReplacesIt) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  const NewDecision quarantine = Decision("feed", 1, StoredDecision::kQuarantined, false);
  RecordResult quarantined = RecordOk(quarantine);
  ASSERT_TRUE(quarantined.recorded);
  const std::string id = quarantined.decision.dead_letter_id;
  ASSERT_EQ(id.size(), 36u);
  absl::StatusOr<std::optional<DeadLetterRecord>> letter = store_->GetDeadLetter(id);
  ASSERT_TRUE(letter.ok() && letter->has_value());
  EXPECT_EQ((*letter)->reason, "missing_provenance_id");
  EXPECT_EQ((*letter)->delivery.raw_body, quarantine.delivery.raw_body);
  EXPECT_EQ((*letter)->delivery.canonical_body, quarantine.delivery.canonical_body);
  EXPECT_EQ((*letter)->delivery.signature_header, "v1a,abc");
  EXPECT_EQ((*letter)->delivery.message_id, "m");
  EXPECT_EQ((*letter)->delivery.is_synthetic, std::optional<bool>(false));
  EXPECT_EQ((*letter)->delivery.digital_source_type, "digitalCapture");

  // Replayed and quarantined again: the same dead letter, with the new reason.
  NewDecision again = Decision("feed", 1, StoredDecision::kQuarantined, false);
  again.decision.reason = "malformed_provenance_signature";
  again.replay_of = id;
  RecordResult requarantined = RecordOk(again);
  EXPECT_TRUE(requarantined.recorded);
  EXPECT_EQ(requarantined.decision.dead_letter_id, id);
  EXPECT_EQ((*store_->GetDeadLetter(id))->reason, "malformed_provenance_signature");
  EXPECT_EQ(Count("SELECT count(*) FROM dead_letters"), 1);

  // Replayed and accepted: the dead letter goes, the item arrives.
  NewDecision accepted = Decision("feed", 1, StoredDecision::kAccepted, true);
  accepted.replay_of = id;
  EXPECT_TRUE(RecordOk(accepted).recorded);
  EXPECT_FALSE(store_->GetDeadLetter(id)->has_value());
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
  EXPECT_TRUE(absl::IsNotFound(store_->DiscardDeadLetter(id)));
}

TEST_F(VerifierPgIngestStoreTest, AcceptingAnItemRemovesItsQuarantinedCopies) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  RecordResult quarantined = RecordOk(Decision("feed", 1, StoredDecision::kQuarantined, false));
  RecordOk(Decision("feed", 2, StoredDecision::kQuarantined, false));
  RecordOk(Decision("other", 1, StoredDecision::kQuarantined, false));
  // A validly signed copy replaces the quarantine and is accepted.
  EXPECT_TRUE(RecordOk(Decision("feed", 1, StoredDecision::kAccepted, true)).recorded);
  EXPECT_FALSE(store_->GetDeadLetter(quarantined.decision.dead_letter_id)->has_value());
  EXPECT_EQ(Count("SELECT count(*) FROM dead_letters"), 2);
}

TEST_F(VerifierPgIngestStoreTest, DeadLettersPageOldestFirstPerPublisher) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  for (int i = 0; i < 5; ++i) {
    RecordOk(Decision(i % 2 == 0 ? "even" : "odd", i, StoredDecision::kQuarantined, false));
  }
  absl::StatusOr<std::vector<DeadLetterRecord>> page = store_->ListDeadLetters("", std::nullopt, 2);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].delivery.item_id, "item-0");
  EXPECT_EQ((*page)[1].delivery.item_id, "item-1");
  std::vector<std::string> all;
  std::optional<DeadLetterPosition> after;
  while (true) {
    page = store_->ListDeadLetters("", after, 2);
    ASSERT_TRUE(page.ok());
    for (const DeadLetterRecord& letter : *page) {
      all.push_back(letter.delivery.item_id);
    }
    if (page->size() < 2) {
      break;
    }
    after = DeadLetterPosition{page->back().created_at, page->back().dead_letter_id};
  }
  EXPECT_EQ(all, (std::vector<std::string>{"item-0", "item-1", "item-2", "item-3", "item-4"}));
  page = store_->ListDeadLetters("even", std::nullopt, 10);
  EXPECT_EQ(page->size(), 3u);
  ASSERT_TRUE(store_->DiscardDeadLetter((*page)[0].dead_letter_id).ok());
  EXPECT_EQ(store_->ListDeadLetters("even", std::nullopt, 10)->size(), 2u);
}

TEST_F(VerifierPgIngestStoreTest, ConcurrentRecordsOfOneKeyRecordOnce) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  constexpr int kThreads = 16;
  std::vector<std::thread> threads;
  std::atomic<int> recorded{0};
  std::atomic<int> duplicates_of_accepted{0};
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      absl::StatusOr<RecordResult> result =
          store_->Record(Decision("feed", 1, StoredDecision::kAccepted, true), kNow);
      ASSERT_TRUE(result.ok()) << result.status();
      if (result->recorded) {
        ++recorded;
      } else if (result->decision.decision == StoredDecision::kAccepted) {
        ++duplicates_of_accepted;
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(recorded.load(), 1);
  EXPECT_EQ(duplicates_of_accepted.load(), kThreads - 1);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 1);
}

// Among concurrent Records, a row that fails fails only its own caller (here a content hash the
// table refuses); the others are recorded all the same.
TEST_F(VerifierPgIngestStoreTest, AmongConcurrentRecordsARowThatFailsFailsOnlyItsCaller) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  constexpr int kThreads = 24;
  constexpr int kBad = 7;
  std::vector<absl::StatusOr<RecordResult>> results(kThreads, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int round = 0; round < 3; ++round) {
    threads.clear();
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i, round] {
        NewDecision next = Decision("feed", round * kThreads + i, StoredDecision::kAccepted, false);
        if (i == kBad) {
          next.decision.content_hash = "not-a-hash";
        }
        results[i] = store_->Record(next, kNow);
      });
    }
    for (std::thread& thread : threads) {
      thread.join();
    }
    for (int i = 0; i < kThreads; ++i) {
      if (i == kBad) {
        EXPECT_FALSE(results[i].ok());
      } else {
        ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status();
        EXPECT_TRUE(results[i]->recorded) << i;
      }
    }
  }
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), 3 * (kThreads - 1));
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_decisions"), 3 * (kThreads - 1));
}

TEST_F(VerifierPgIngestStoreTest, AcceptedItemsPageByCursor) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  for (int i = 0; i < 5; ++i) {
    RecordOk(Decision("feed", i, StoredDecision::kAccepted, i % 2 == 0));
  }
  absl::StatusOr<std::vector<AcceptedItemRecord>> first = store_->ListAcceptedItems(0, 3);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  EXPECT_LT((*first)[0].cursor, (*first)[1].cursor);
  EXPECT_TRUE((*first)[0].signature_valid);
  EXPECT_FALSE((*first)[1].signature_valid);
  absl::StatusOr<std::vector<AcceptedItemRecord>> rest =
      store_->ListAcceptedItems(first->back().cursor, 3);
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[1].item_id, "item-4");
}

// An accepted item takes its cursor inside its transaction, and transactions commit in any order:
// a consumer that has read cursor N must never later find a smaller one. Here a transaction
// holding cursor N (taken as Record takes it: the outbox lock shared, then the insert) is still
// open while a later Record commits N+1; the consumer's read must wait for N rather than answer
// N+1 alone.
TEST_F(VerifierPgIngestStoreTest, ConsumersNeverSkipAnItemThatCommitsLaterWithASmallerCursor) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  pqxx::connection slow_connection(url_);
  pqxx::work slow(slow_connection);
  slow.exec("SELECT pg_advisory_xact_lock_shared(7243305411720019201)");  // pg_ingest_store.cc
  const int64_t slow_cursor =
      slow.exec1("INSERT INTO ingest_items (publisher, item_id, content_hash, canonical_body, "
                 "signature_valid) VALUES ('feed', 'slow', '" + Hash(1) + "', 'x', false) "
                 "RETURNING cursor")[0]
          .as<int64_t>();
  // Not blocked by the open one: inserters do not wait for each other.
  ASSERT_TRUE(RecordOk(Decision("feed", 2, StoredDecision::kAccepted, false)).recorded);

  std::atomic<bool> answered{false};
  absl::StatusOr<std::vector<AcceptedItemRecord>> read;
  std::thread consumer([&] {
    read = store_->ListAcceptedItems(0, 10);
    answered = true;
  });
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(answered.load()) << "answered while an earlier cursor was uncommitted";
  slow.commit();
  consumer.join();
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[0].cursor, slow_cursor);
  EXPECT_EQ((*read)[0].item_id, "slow");
  EXPECT_GT((*read)[1].cursor, slow_cursor);
  EXPECT_EQ((*read)[1].item_id, "item-2");
}

// The same guarantee under load: writers record accepted items concurrently while a consumer
// pages by cursor; it sees every item, in increasing cursor order, none skipped.
TEST_F(VerifierPgIngestStoreTest, AConsumerPagingDuringConcurrentAcceptsSeesEveryItem) {
  PORTCULLIS_CREATE_TEST_DATABASE_OR_SKIP(db);
  Open(db->connection_string());
  constexpr int kWriters = 5;
  constexpr int kPerWriter = 60;
  std::atomic<int> writers_left{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        absl::StatusOr<RecordResult> result = store_->Record(
            Decision("feed", w * kPerWriter + i, StoredDecision::kAccepted, false), kNow);
        EXPECT_TRUE(result.ok() && result->recorded) << result.status();
      }
      --writers_left;
    });
  }
  std::vector<AcceptedItemRecord> seen;
  int64_t after = 0;
  for (bool last_pass = false;;) {
    last_pass = writers_left.load() == 0;
    absl::StatusOr<std::vector<AcceptedItemRecord>> page = store_->ListAcceptedItems(after, 7);
    ASSERT_TRUE(page.ok()) << page.status();
    for (AcceptedItemRecord& item : *page) {
      ASSERT_GT(item.cursor, after);
      after = item.cursor;
      seen.push_back(std::move(item));
    }
    if (last_pass && page->empty()) {
      break;
    }
  }
  for (std::thread& writer : writers) {
    writer.join();
  }
  ASSERT_EQ(static_cast<int>(seen.size()), kWriters * kPerWriter);
  EXPECT_EQ(Count("SELECT count(*) FROM ingest_items"), kWriters * kPerWriter);
}

}  // namespace
}  // namespace portcullis::verifier::store
