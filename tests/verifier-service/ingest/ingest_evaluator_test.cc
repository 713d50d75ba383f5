#include "verifier-service/src/ingest/ingest_evaluator.h"

#include <map>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "common/crypto/sha256.h"
#include "gtest/gtest.h"
#include "tests/support/c2pa_test_signer.h"
#include "tests/support/shared_testdata.h"

namespace portcullis::verifier::ingest {
namespace {

using store::DecisionRecord;
using store::DeliveryRecord;
using store::PublisherRecord;
using store::StoredDecision;

// Publishers by name; counts lookups; fails on demand.
class FakePublisherStore final : public store::PublisherStore {
 public:
  absl::StatusOr<std::optional<PublisherRecord>> GetPublisher(const std::string& name) override {
    ++lookups;
    if (!fail_with.ok()) {
      return fail_with;
    }
    auto it = publishers.find(name);
    if (it == publishers.end()) {
      return std::optional<PublisherRecord>();
    }
    return std::optional<PublisherRecord>(it->second);
  }
  absl::StatusOr<store::AddPublisherResult> AddPublisher(const store::PublisherSettings&) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<std::vector<PublisherRecord>> ListPublishers(const std::string&, int) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<PublisherRecord> SetEnabled(const std::string&, bool) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<PublisherRecord> UpdateSettings(const std::string&,
                                                 const store::PublisherSettingsChange&) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<store::AddKeyResult> AddKey(const std::string&, const std::string&,
                                             const std::string&) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<store::PublisherKeyRecord> RevokeKey(const std::string&,
                                                      const std::string&) override {
    return absl::UnimplementedError("fake");
  }

  std::map<std::string, PublisherRecord> publishers;
  absl::Status fail_with;
  int lookups = 0;
};

// The IngestStore contract in memory (the replacement rule of IngestStore::Record).
class FakeIngestStore final : public store::IngestStore {
 public:
  absl::StatusOr<std::optional<DecisionRecord>> FindDecision(const std::string& publisher,
                                                             const std::string& content_hash,
                                                             absl::Time now) override {
    ++finds;
    if (!fail_find.ok()) {
      return fail_find;
    }
    auto it = decisions.find({publisher, content_hash});
    if (it == decisions.end() || it->second.expires_at <= now) {
      return std::optional<DecisionRecord>();
    }
    return std::optional<DecisionRecord>(it->second);
  }

  absl::StatusOr<store::RecordResult> Record(const store::NewDecision& next,
                                             absl::Time now) override {
    ++records;
    if (!fail_record.ok()) {
      return fail_record;
    }
    if (commit_before_record.has_value()) {
      decisions[{commit_before_record->publisher, commit_before_record->content_hash}] =
          *commit_before_record;
      commit_before_record.reset();
    }
    const auto key = std::make_pair(next.decision.publisher, next.decision.content_hash);
    const auto drop_key_drops = [&] {
      std::erase_if(ledger, [&](const store::DroppedDeliveryRecord& drop) {
        return drop.delivery.publisher == key.first && drop.delivery.content_hash == key.second;
      });
    };
    auto it = decisions.find(key);
    if (it != decisions.end()) {
      const DecisionRecord& old = it->second;
      const bool replace =
          old.expires_at <= now ||
          (next.decision.signature_valid && !old.signature_valid &&
           old.decision != StoredDecision::kAccepted) ||
          (!old.dead_letter_id.empty() && old.dead_letter_id == next.replay_of) ||
          (!next.reevaluation_of.empty() && old.decision == StoredDecision::kDropped);
      if (!replace) {
        if (!next.replay_of.empty()) {
          dead_letters.erase(next.replay_of);
        }
        if (!next.reevaluation_of.empty() && old.decision == StoredDecision::kAccepted) {
          drop_key_drops();
        }
        return store::RecordResult{false, old};
      }
    }
    if (!next.reevaluation_of.empty()) {
      drop_key_drops();
    }
    DecisionRecord recorded = next.decision;
    if (recorded.decision == StoredDecision::kQuarantined) {
      recorded.dead_letter_id =
          next.replay_of.empty() ? absl::StrCat("dl-", ++dead_letter_ids) : next.replay_of;
      store::DeadLetterRecord& letter = dead_letters[recorded.dead_letter_id];
      letter.dead_letter_id = recorded.dead_letter_id;
      letter.reason = recorded.reason;
      letter.delivery = next.delivery;
      if (next.replay_of.empty()) {
        letter.created_at = now;
      }
    } else if (!next.replay_of.empty()) {
      dead_letters.erase(next.replay_of);
    }
    if (recorded.decision == StoredDecision::kAccepted) {
      items.push_back(next.delivery);
      item_media.push_back(next.media_verification);
      std::erase_if(dead_letters, [&](const auto& entry) {
        return entry.second.delivery.publisher == next.delivery.publisher &&
               entry.second.delivery.content_hash == next.delivery.content_hash;
      });
    }
    decisions[key] = recorded;
    store::RecordResult result{true, recorded};
    if (recorded.decision == StoredDecision::kDropped &&
        next.keep_drop_for > absl::ZeroDuration() && next.reevaluation_of.empty()) {
      ledger.push_back({absl::StrCat("drop-", ledger.size() + 1), recorded.reason, next.delivery,
                        recorded.decided_at, recorded.decided_at + next.keep_drop_for});
      result.drop_kept = true;
    }
    return result;
  }

  absl::StatusOr<std::vector<store::DeadLetterRecord>> ListDeadLetters(
      const std::string&, const std::optional<store::DeadLetterPosition>&, int) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<std::optional<store::DeadLetterRecord>> GetDeadLetter(
      const std::string& id) override {
    auto it = dead_letters.find(id);
    if (it == dead_letters.end()) {
      return std::optional<store::DeadLetterRecord>();
    }
    return std::optional<store::DeadLetterRecord>(it->second);
  }
  absl::Status DiscardDeadLetter(const std::string&) override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<std::vector<store::AcceptedItemRecord>> ListAcceptedItems(int64_t,
                                                                           int) override {
    return absl::UnimplementedError("fake");
  }
  // The ledger in received order (ids never sort out of it here).
  absl::StatusOr<std::vector<store::DroppedDeliveryRecord>> ListDrops(
      const store::DropFilter& filter, const std::optional<store::DropPosition>& after,
      int limit) override {
    std::vector<store::DroppedDeliveryRecord> page;
    bool past = !after.has_value();
    for (const store::DroppedDeliveryRecord& drop : ledger) {
      if (!past) {
        past = drop.drop_id == after->drop_id;
        continue;
      }
      if (drop.delivery.publisher == filter.publisher &&
          (filter.reason.empty() || drop.reason == filter.reason) &&
          drop.received_at >= filter.since && static_cast<int>(page.size()) < limit) {
        page.push_back(drop);
      }
    }
    return page;
  }

  std::vector<store::DroppedDeliveryRecord> ledger;
  std::map<std::pair<std::string, std::string>, DecisionRecord> decisions;
  std::map<std::string, store::DeadLetterRecord> dead_letters;
  std::vector<DeliveryRecord> items;
  // Per accepted item, what was verified of its media.
  std::vector<std::vector<store::MediaVerificationRecord>> item_media;
  absl::Status fail_find;
  absl::Status fail_record;
  // Committed by "another pod" just before the next Record.
  std::optional<DecisionRecord> commit_before_record;
  int finds = 0;
  int records = 0;
  int dead_letter_ids = 0;
};

constexpr int64_t kNow = 1'700'000'000;

class IngestEvaluatorTest : public ::testing::Test {
 protected:
  IngestEvaluatorTest() { Build({}); }

  void Build(IngestEvaluatorOptions options) {
    options.clock = [this] { return now_; };
    evaluator_ = std::make_unique<IngestEvaluator>(publishers_, ingest_, std::move(options));
  }

  PublisherRecord& AddPublisher(const std::string& name, bool verified = false,
                                bool require_signature = false, int64_t retention_seconds = 0) {
    PublisherRecord& publisher = publishers_.publishers[name];
    publisher.settings = {name, verified, require_signature, retention_seconds};
    publisher.enabled = true;
    publisher.keys.push_back({"key-1", store::kEd25519Algorithm,
                              std::string(key_.PublicKey().raw()), "00000000",
                              absl::FromUnixSeconds(0), std::nullopt});
    return publisher;
  }

  static DeliveryRecord Delivery(const std::string& publisher, const std::string& id,
                                 std::optional<bool> synthetic = std::nullopt,
                                 const std::string& source_type = "") {
    DeliveryRecord delivery;
    delivery.publisher = publisher;
    delivery.item_id = id;
    delivery.raw_body = absl::StrCat(R"({"id":")", id, R"("})");
    delivery.canonical_body = delivery.raw_body;
    delivery.content_hash = crypto::ToHex(crypto::Sha256(delivery.canonical_body));
    delivery.is_synthetic = synthetic;
    delivery.digital_source_type = source_type;
    return delivery;
  }

  DeliveryRecord Signed(DeliveryRecord delivery, const crypto::Ed25519PrivateKey& key,
                        int64_t timestamp = kNow) const {
    delivery.message_id = "msg_1";
    delivery.timestamp = absl::StrCat(timestamp);
    delivery.signature_header =
        SignV1a(key, SignedContent(delivery.message_id, timestamp, delivery.raw_body));
    return delivery;
  }
  DeliveryRecord Signed(DeliveryRecord delivery) const { return Signed(std::move(delivery), key_); }

  IngestOutcome EvaluateOk(const DeliveryRecord& delivery) {
    absl::StatusOr<IngestOutcome> outcome = evaluator_->Evaluate(delivery);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : IngestOutcome();
  }

  absl::Time now_ = absl::FromUnixSeconds(kNow);
  const crypto::Ed25519PrivateKey key_ = crypto::Ed25519PrivateKey::Generate();
  const crypto::Ed25519PrivateKey stranger_ = crypto::Ed25519PrivateKey::Generate();
  FakePublisherStore publishers_;
  FakeIngestStore ingest_;
  std::unique_ptr<IngestEvaluator> evaluator_;
};

TEST(IngestSyntheticTest, IsSyntheticByFlagOrIptcType) {
  EXPECT_TRUE(IsSynthetic(true, ""));
  EXPECT_FALSE(IsSynthetic(false, ""));
  EXPECT_FALSE(IsSynthetic(std::nullopt, ""));
  EXPECT_TRUE(IsSynthetic(std::nullopt, "trainedAlgorithmicMedia"));
  EXPECT_TRUE(IsSynthetic(
      false, "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"));
  EXPECT_TRUE(IsSynthetic(std::nullopt, "compositeWithTrainedAlgorithmicMedia"));
  EXPECT_FALSE(IsSynthetic(std::nullopt, "digitalCapture"));
  EXPECT_FALSE(IsSynthetic(std::nullopt, "algorithmicMedia"));
  EXPECT_FALSE(IsSynthetic(std::nullopt, "trainedAlgorithmicMedia/"));
}

TEST_F(IngestEvaluatorTest, UnknownAndDisabledPublishersAreRefusedWithoutRecording) {
  IngestOutcome unknown = EvaluateOk(Delivery("nobody", "a"));
  EXPECT_EQ(unknown.verdict, IngestVerdict::kUnknownPublisher);
  EXPECT_EQ(unknown.reason, "unknown_publisher");
  AddPublisher("off").enabled = false;
  EXPECT_EQ(EvaluateOk(Delivery("off", "a")).verdict, IngestVerdict::kUnknownPublisher);
  EXPECT_EQ(ingest_.records, 0);
  EXPECT_EQ(ingest_.finds, 0);
}

TEST_F(IngestEvaluatorTest, WithoutRequiredRegistrationAnUnknownPublisherIsUnverifiedAndKeyless) {
  IngestEvaluatorOptions options;
  options.require_registration = false;
  Build(options);
  EXPECT_EQ(EvaluateOk(Delivery("nobody", "a")).verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(EvaluateOk(Delivery("nobody", "b", true)).reason, kReasonUnverifiedSynthetic);
  // No keys: any signature is invalid; malformed metadata is not quarantined (not verified).
  EXPECT_EQ(EvaluateOk(Signed(Delivery("nobody", "c"))).reason, kReasonInvalidSignature);
  DeliveryRecord malformed = Signed(Delivery("nobody", "d"));
  malformed.message_id.clear();
  EXPECT_EQ(EvaluateOk(malformed).reason, kReasonInvalidSignature);
}

TEST_F(IngestEvaluatorTest, AFailingLookupIsUnavailableNeverADrop) {
  AddPublisher("feed");
  publishers_.fail_with = absl::InternalError("relation does not exist");
  absl::StatusOr<IngestOutcome> outcome = evaluator_->Evaluate(Delivery("feed", "a", true));
  EXPECT_TRUE(absl::IsUnavailable(outcome.status())) << outcome.status();
  publishers_.fail_with = absl::DeadlineExceededError("statement timeout");
  outcome = evaluator_->Evaluate(Delivery("feed", "a", true));
  EXPECT_TRUE(absl::IsDeadlineExceeded(outcome.status())) << outcome.status();
  publishers_.fail_with = absl::OkStatus();
  ingest_.fail_find = absl::UnavailableError("connection lost");
  outcome = evaluator_->Evaluate(Delivery("feed", "a", true));
  EXPECT_TRUE(absl::IsUnavailable(outcome.status())) << outcome.status();
  ingest_.fail_find = absl::OkStatus();
  ingest_.fail_record = absl::InternalError("constraint");
  outcome = evaluator_->Evaluate(Delivery("feed", "a", true));
  EXPECT_TRUE(absl::IsUnavailable(outcome.status())) << outcome.status();
  EXPECT_TRUE(ingest_.decisions.empty());
}

TEST_F(IngestEvaluatorTest, PublisherLookupsAreCachedForTheTtl) {
  IngestEvaluatorOptions options;
  options.publisher_cache_ttl = absl::Seconds(5);
  Build(options);
  AddPublisher("feed");
  EvaluateOk(Delivery("feed", "a"));
  EvaluateOk(Delivery("feed", "b"));
  EvaluateOk(Delivery("nobody", "a"));
  EvaluateOk(Delivery("nobody", "b"));
  EXPECT_EQ(publishers_.lookups, 2);
  now_ += absl::Seconds(5);
  EvaluateOk(Delivery("feed", "c"));
  EXPECT_EQ(publishers_.lookups, 3);
  // A disabled publisher shows after ForgetPublisher (the admin RPCs call it).
  publishers_.publishers["feed"].enabled = false;
  EXPECT_EQ(EvaluateOk(Delivery("feed", "d")).verdict, IngestVerdict::kAccepted);
  evaluator_->ForgetPublisher("feed");
  EXPECT_EQ(EvaluateOk(Delivery("feed", "e")).verdict, IngestVerdict::kUnknownPublisher);
}

TEST_F(IngestEvaluatorTest, TheDecisionRuleInOrder) {
  AddPublisher("open");
  AddPublisher("strict", false, /*require_signature=*/true);

  IngestOutcome plain = EvaluateOk(Delivery("open", "plain"));
  EXPECT_EQ(plain.verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(plain.reason, "");
  EXPECT_FALSE(plain.signature_valid);
  ASSERT_EQ(ingest_.items.size(), 1u);
  EXPECT_EQ(ingest_.items[0].item_id, "plain");

  IngestOutcome synthetic = EvaluateOk(Delivery("open", "synthetic", true));
  EXPECT_EQ(synthetic.verdict, IngestVerdict::kDropped);
  EXPECT_EQ(synthetic.reason, kReasonUnverifiedSynthetic);
  EXPECT_EQ(EvaluateOk(Delivery("open", "iptc", std::nullopt, "trainedAlgorithmicMedia")).reason,
            kReasonUnverifiedSynthetic);

  IngestOutcome signed_synthetic = EvaluateOk(Signed(Delivery("open", "signed", true)));
  EXPECT_EQ(signed_synthetic.verdict, IngestVerdict::kAccepted);
  EXPECT_TRUE(signed_synthetic.signature_valid);

  // An invalid signature drops even a non-synthetic item, before require_signature.
  EXPECT_EQ(EvaluateOk(Signed(Delivery("open", "bad"), stranger_)).reason,
            kReasonInvalidSignature);
  EXPECT_EQ(EvaluateOk(Signed(Delivery("strict", "bad"), stranger_)).reason,
            kReasonInvalidSignature);
  // require_signature comes before the synthetic rule.
  EXPECT_EQ(EvaluateOk(Delivery("strict", "unsigned", true)).reason, kReasonSignatureRequired);
  EXPECT_EQ(EvaluateOk(Signed(Delivery("strict", "ok"))).verdict, IngestVerdict::kAccepted);
  // A stale timestamp is an invalid signature.
  EXPECT_EQ(EvaluateOk(Signed(Delivery("open", "stale"), key_, kNow - 301)).reason,
            kReasonInvalidSignature);
  // A revoked key does not verify.
  publishers_.publishers["open"].keys[0].revoked_at = now_;
  evaluator_->ForgetPublisher("open");
  EXPECT_EQ(EvaluateOk(Signed(Delivery("open", "revoked", true))).reason,
            kReasonInvalidSignature);
}

TEST_F(IngestEvaluatorTest, SeveralActiveKeysAllVerify) {
  PublisherRecord& publisher = AddPublisher("rotating");
  const std::string secret(32, 's');
  publisher.keys.push_back({"key-2", store::kHmacSha256Algorithm, secret, "11111111",
                            absl::FromUnixSeconds(0), std::nullopt});
  DeliveryRecord hmac = Delivery("rotating", "h", true);
  hmac.message_id = "m";
  hmac.timestamp = absl::StrCat(kNow);
  hmac.signature_header = SignV1(secret, SignedContent("m", kNow, hmac.raw_body));
  EXPECT_EQ(EvaluateOk(hmac).verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(EvaluateOk(Signed(Delivery("rotating", "e", true))).verdict,
            IngestVerdict::kAccepted);
}

// Keys are decoded once per publisher lookup and the last key that verified is tried first: a
// revoked key must still stop verifying exactly when the looked-up record says so — at the next
// lookup (ForgetPublisher, or the cache TTL), never later.
TEST_F(IngestEvaluatorTest, RotatedAndRevokedKeysStopVerifyingWhenTheRecordChanges) {
  IngestEvaluatorOptions options;
  options.publisher_cache_ttl = absl::Seconds(5);
  Build(options);
  PublisherRecord& publisher = AddPublisher("rotating");
  const crypto::Ed25519PrivateKey next = crypto::Ed25519PrivateKey::Generate();
  publisher.keys.push_back({"key-2", store::kEd25519Algorithm, std::string(next.PublicKey().raw()),
                            "22222222", absl::FromUnixSeconds(10), std::nullopt});
  int n = 0;
  auto evaluate = [&](const crypto::Ed25519PrivateKey& key) {
    return EvaluateOk(Signed(Delivery("rotating", absl::StrCat("item-", n++), true), key));
  };
  // Either key, in any order, many times: the preferred-key hint never changes a decision.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(evaluate(key_).verdict, IngestVerdict::kAccepted);
    EXPECT_EQ(evaluate(key_).verdict, IngestVerdict::kAccepted);
    EXPECT_EQ(evaluate(next).verdict, IngestVerdict::kAccepted);
    EXPECT_EQ(evaluate(stranger_).reason, kReasonInvalidSignature);
  }
  // key-1 (the one verified last but one) revoked in the store: it still verifies while the
  // cached record lives, as before...
  publishers_.publishers["rotating"].keys[0].revoked_at = now_;
  EXPECT_EQ(evaluate(key_).verdict, IngestVerdict::kAccepted);
  now_ += absl::Seconds(4);
  EXPECT_EQ(evaluate(key_).verdict, IngestVerdict::kAccepted);
  // ...and stops at the TTL, although it was the preferred key; key-2 goes on verifying.
  now_ += absl::Seconds(1);
  EXPECT_EQ(evaluate(key_).reason, kReasonInvalidSignature);
  EXPECT_EQ(evaluate(next).verdict, IngestVerdict::kAccepted);
  // key-2 revoked through the admin path (ForgetPublisher): at once.
  publishers_.publishers["rotating"].keys[1].revoked_at = now_;
  EXPECT_EQ(evaluate(next).verdict, IngestVerdict::kAccepted);
  evaluator_->ForgetPublisher("rotating");
  EXPECT_EQ(evaluate(next).reason, kReasonInvalidSignature);
  EXPECT_EQ(evaluate(key_).reason, kReasonInvalidSignature);
}

TEST_F(IngestEvaluatorTest, MalformedMetadataIsQuarantinedOnlyForVerifiedPublishers) {
  AddPublisher("trusted", /*verified=*/true);
  AddPublisher("open");
  struct Case {
    std::function<void(DeliveryRecord&)> mangle;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {[](DeliveryRecord& d) { d.message_id.clear(); }, kReasonMissingId},
      {[](DeliveryRecord& d) { d.message_id = "a\nb"; }, kReasonMalformedId},
      {[](DeliveryRecord& d) { d.timestamp.clear(); }, kReasonMissingTimestamp},
      {[](DeliveryRecord& d) { d.timestamp = "12x"; }, kReasonMalformedTimestamp},
      {[](DeliveryRecord& d) { d.signature_header = "v1a,@@@"; }, kReasonMalformedSignature},
      {[](DeliveryRecord& d) { d.signature_header = std::string(3000, 'v'); },
       kReasonMalformedSignature},
  };
  int n = 0;
  for (const Case& c : cases) {
    DeliveryRecord trusted = Signed(Delivery("trusted", absl::StrCat("t", n)));
    c.mangle(trusted);
    IngestOutcome quarantined = EvaluateOk(trusted);
    EXPECT_EQ(quarantined.verdict, IngestVerdict::kQuarantined) << c.reason;
    EXPECT_EQ(quarantined.reason, c.reason);
    EXPECT_FALSE(quarantined.dead_letter_id.empty());
    ASSERT_EQ(ingest_.dead_letters.count(quarantined.dead_letter_id), 1u);
    EXPECT_EQ(ingest_.dead_letters[quarantined.dead_letter_id].delivery.raw_body,
              trusted.raw_body);

    DeliveryRecord open = Signed(Delivery("open", absl::StrCat("o", n++)));
    c.mangle(open);
    IngestOutcome dropped = EvaluateOk(open);
    EXPECT_EQ(dropped.verdict, IngestVerdict::kDropped) << c.reason;
    EXPECT_EQ(dropped.reason, kReasonInvalidSignature);
  }
  EXPECT_EQ(ingest_.dead_letters.size(), cases.size());
}

TEST_F(IngestEvaluatorTest, ADuplicateAnswersTheOriginalWithoutEvaluatingAgain) {
  AddPublisher("feed");
  EvaluateOk(Delivery("feed", "x", true));
  const int records = ingest_.records;
  // Same canonical body: a duplicate even if the fields that decide would now differ.
  DeliveryRecord again = Delivery("feed", "x", false);
  IngestOutcome duplicate = EvaluateOk(again);
  EXPECT_EQ(duplicate.verdict, IngestVerdict::kDuplicate);
  EXPECT_EQ(duplicate.reason, "dropped:unverified_synthetic_content");
  EXPECT_EQ(duplicate.item_id, "x");
  EXPECT_EQ(ingest_.records, records);

  EvaluateOk(Delivery("feed", "y"));
  EXPECT_EQ(EvaluateOk(Delivery("feed", "y")).reason, "accepted");
  // Another publisher's identical body is not a duplicate.
  AddPublisher("other");
  EXPECT_EQ(EvaluateOk(Delivery("other", "y")).verdict, IngestVerdict::kAccepted);
}

TEST_F(IngestEvaluatorTest, AValidSignatureReplacesAnUnsignedDropButNothingElseDoes) {
  AddPublisher("feed");
  EXPECT_EQ(EvaluateOk(Delivery("feed", "x", true)).verdict, IngestVerdict::kDropped);
  EXPECT_EQ(EvaluateOk(Signed(Delivery("feed", "x", true), stranger_)).verdict,
            IngestVerdict::kDuplicate);
  IngestOutcome replaced = EvaluateOk(Signed(Delivery("feed", "x", true)));
  EXPECT_EQ(replaced.verdict, IngestVerdict::kAccepted);
  EXPECT_TRUE(replaced.signature_valid);
  const DecisionRecord& stored = ingest_.decisions.begin()->second;
  EXPECT_EQ(stored.decision, StoredDecision::kAccepted);
  EXPECT_TRUE(stored.signature_valid);
  // An accepted decision is never replaced, signed or not.
  EXPECT_EQ(EvaluateOk(Signed(Delivery("feed", "x", true))).reason, "accepted");
  EXPECT_EQ(ingest_.items.size(), 1u);
  // Neither is a validly signed drop.
  AddPublisher("strict", false, true);
  DeliveryRecord stale = Signed(Delivery("strict", "s"), key_, kNow - 1000);
  EXPECT_EQ(EvaluateOk(stale).reason, kReasonInvalidSignature);
  EXPECT_EQ(EvaluateOk(Signed(Delivery("strict", "s"))).verdict, IngestVerdict::kAccepted);
}

TEST_F(IngestEvaluatorTest, DecisionsExpireAfterThePublishersRetentionOrTheDefault) {
  IngestEvaluatorOptions options;
  options.default_retention = absl::Hours(72);
  Build(options);
  AddPublisher("default");
  AddPublisher("short", false, false, /*retention_seconds=*/60);
  EvaluateOk(Delivery("default", "a"));
  EvaluateOk(Delivery("short", "a"));
  for (const auto& [key, decision] : ingest_.decisions) {
    EXPECT_EQ(decision.decided_at, now_);
    EXPECT_EQ(decision.expires_at,
              now_ + (key.first == "short" ? absl::Seconds(60) : absl::Hours(72)));
  }
  now_ += absl::Seconds(60);
  EXPECT_EQ(EvaluateOk(Delivery("short", "a")).verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(EvaluateOk(Delivery("default", "a")).verdict, IngestVerdict::kDuplicate);
}

TEST_F(IngestEvaluatorTest, LosingTheRecordRaceAnswersTheWinnersDecision) {
  AddPublisher("feed");
  const DeliveryRecord delivery = Delivery("feed", "x", true);
  // Another pod records an accepted decision between our lookup and our record.
  DecisionRecord winner;
  winner.publisher = "feed";
  winner.content_hash = delivery.content_hash;
  winner.item_id = "x-from-the-winner";
  winner.decision = StoredDecision::kAccepted;
  winner.signature_valid = true;
  winner.expires_at = now_ + absl::Hours(1);
  ingest_.commit_before_record = winner;
  IngestOutcome outcome = EvaluateOk(delivery);
  EXPECT_EQ(outcome.verdict, IngestVerdict::kDuplicate);
  EXPECT_EQ(outcome.reason, "accepted");
  EXPECT_EQ(outcome.item_id, "x-from-the-winner");
  EXPECT_TRUE(outcome.signature_valid);
  EXPECT_EQ(ingest_.records, 1);
}

TEST_F(IngestEvaluatorTest, ReplayDecidesAgainWithCurrentKeysAtTheReceiptTime) {
  AddPublisher("trusted", /*verified=*/true);
  const crypto::Ed25519PrivateKey later = crypto::Ed25519PrivateKey::Generate();
  DeliveryRecord delivery = Signed(Delivery("trusted", "q", true), later);
  delivery.signature_header = "v1,### " + delivery.signature_header;
  IngestOutcome quarantined = EvaluateOk(delivery);
  ASSERT_EQ(quarantined.verdict, IngestVerdict::kQuarantined);
  EXPECT_EQ(quarantined.reason, kReasonMalformedSignature);

  absl::StatusOr<IngestOutcome> missing = evaluator_->Replay("no-such-letter");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();

  // An hour later, with the key still missing: quarantined again, same dead letter.
  now_ += absl::Hours(1);
  absl::StatusOr<IngestOutcome> again = evaluator_->Replay(quarantined.dead_letter_id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->verdict, IngestVerdict::kQuarantined);
  EXPECT_EQ(again->dead_letter_id, quarantined.dead_letter_id);
  EXPECT_EQ(ingest_.dead_letters.size(), 1u);

  // The key is registered (no ForgetPublisher: a replay reads the publisher afresh).
  publishers_.publishers["trusted"].keys.push_back(
      {"key-2", store::kEd25519Algorithm, std::string(later.PublicKey().raw()), "22222222",
       absl::FromUnixSeconds(0), std::nullopt});
  absl::StatusOr<IngestOutcome> accepted = evaluator_->Replay(quarantined.dead_letter_id);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(accepted->verdict, IngestVerdict::kAccepted);
  EXPECT_TRUE(accepted->signature_valid);
  EXPECT_TRUE(ingest_.dead_letters.empty());
  ASSERT_EQ(ingest_.items.size(), 1u);
  EXPECT_EQ(EvaluateOk(delivery).reason, "accepted");
}

TEST_F(IngestEvaluatorTest, ReplayOfADisabledPublishersLetterLeavesItQueued) {
  AddPublisher("trusted", /*verified=*/true);
  DeliveryRecord delivery = Signed(Delivery("trusted", "q"));
  delivery.timestamp.clear();
  IngestOutcome quarantined = EvaluateOk(delivery);
  ASSERT_EQ(quarantined.verdict, IngestVerdict::kQuarantined);
  publishers_.publishers["trusted"].enabled = false;
  absl::StatusOr<IngestOutcome> replayed = evaluator_->Replay(quarantined.dead_letter_id);
  ASSERT_TRUE(replayed.ok());
  EXPECT_EQ(replayed->verdict, IngestVerdict::kUnknownPublisher);
  EXPECT_EQ(ingest_.dead_letters.size(), 1u);
}

// The shared Standard Webhooks verify vectors, delivered as synthetic items by an unverified
// publisher holding the vector's secret, at the vector's "now": a valid signature is accepted,
// anything else dropped.
TEST_F(IngestEvaluatorTest, DropsAreKeptOnlyForPublishersThatKeepThem) {
  IngestEvaluatorOptions options;
  options.drop_ledger_max_bytes = 4096;
  Build(options);
  AddPublisher("plain");
  AddPublisher("keeper").settings.keep_drops_seconds = 3600;
  EXPECT_EQ(EvaluateOk(Delivery("plain", "a", true)).verdict, IngestVerdict::kDropped);
  EXPECT_TRUE(ingest_.ledger.empty());
  EXPECT_EQ(EvaluateOk(Delivery("keeper", "a", true)).verdict, IngestVerdict::kDropped);
  ASSERT_EQ(ingest_.ledger.size(), 1u);
  EXPECT_EQ(ingest_.ledger[0].received_at, now_);
  EXPECT_EQ(ingest_.ledger[0].expires_at, now_ + absl::Hours(1));
  // Accepted items are not drops.
  EXPECT_EQ(EvaluateOk(Delivery("keeper", "b")).verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(ingest_.ledger.size(), 1u);
}

TEST_F(IngestEvaluatorTest, ReevaluationAcceptsWhatIsValidNowOnceAndJudgesTheReceiptTime) {
  PublisherRecord& publisher = AddPublisher("feed");
  publisher.settings.keep_drops_seconds = 24 * 3600;
  publisher.keys.clear();  // The key is not registered yet.
  // Signed, synthetic, dropped for the unknown key; an unsigned synthetic one; a tampered one.
  EXPECT_EQ(EvaluateOk(Signed(Delivery("feed", "signed", true))).reason, kReasonInvalidSignature);
  EXPECT_EQ(EvaluateOk(Delivery("feed", "unsigned", true)).reason, kReasonUnverifiedSynthetic);
  DeliveryRecord tampered = Signed(Delivery("feed", "tampered", true));
  tampered.raw_body += " ";
  EXPECT_EQ(EvaluateOk(tampered).reason, kReasonInvalidSignature);
  ASSERT_EQ(ingest_.ledger.size(), 3u);

  // Much later (the signatures' window has long passed): the key is added.
  now_ += absl::Hours(3);
  AddPublisher("feed").settings.keep_drops_seconds = 24 * 3600;
  const store::DropFilter filter{"feed", "", absl::InfinitePast()};
  absl::StatusOr<DropReevaluation> dry = evaluator_->ReevaluateDrops(filter, /*dry_run=*/true);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->matched, 3);
  EXPECT_EQ(dry->accepted, 1);
  EXPECT_EQ(dry->still_dropped, 2);
  EXPECT_TRUE(ingest_.items.empty());
  EXPECT_EQ(ingest_.ledger.size(), 3u);

  absl::StatusOr<DropReevaluation> done = evaluator_->ReevaluateDrops(filter, false);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->matched, 3);
  EXPECT_EQ(done->accepted, 1);
  EXPECT_EQ(done->still_dropped, 2);
  ASSERT_EQ(ingest_.items.size(), 1u);
  EXPECT_EQ(ingest_.items[0].item_id, "signed");
  EXPECT_EQ(ingest_.ledger.size(), 2u);

  done = evaluator_->ReevaluateDrops(filter, false);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->matched, 2);
  EXPECT_EQ(done->accepted, 0);
  EXPECT_EQ(ingest_.items.size(), 1u);

  // A filter by reason.
  dry = evaluator_->ReevaluateDrops({"feed", kReasonUnverifiedSynthetic, absl::InfinitePast()},
                                    true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->matched, 1);

  // An unknown publisher cannot be re-evaluated.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      evaluator_->ReevaluateDrops({"nobody", "", absl::InfinitePast()}, false).status()));
}

TEST_F(IngestEvaluatorTest, SharedVerifyVectorsDecideAsTheyVerify) {
  PORTCULLIS_READ_SHARED_TESTDATA_OR_SKIP(
      text, std::string(PORTCULLIS_SHARED_TESTDATA_DIR) + "/standard-webhooks/vectors.json");
  const boost::json::value vectors = boost::json::parse(text);
  testing::VectorTally tally;
  int n = 0;
  for (const boost::json::value& vector : vectors.at("verify_vectors").as_array()) {
    const boost::json::object& v = vector.as_object();
    const std::string id(v.at("id").as_string());
    absl::StatusOr<VerificationKey> key =
        ParseVerificationKey("k", std::string(v.at("secret").as_string()));
    ASSERT_TRUE(key.ok()) << id;
    const std::string name = absl::StrCat("vector-", n++);
    PublisherRecord& publisher = publishers_.publishers[name];
    publisher.settings.name = name;
    publisher.keys = {{"k", store::kHmacSha256Algorithm, key->material, "", absl::Time(),
                       std::nullopt}};
    DeliveryRecord delivery;
    delivery.publisher = name;
    delivery.item_id = id;
    delivery.raw_body = std::string(v.at("payload").as_string());
    delivery.canonical_body = delivery.raw_body;
    delivery.content_hash = crypto::ToHex(crypto::Sha256(delivery.raw_body));
    delivery.is_synthetic = true;
    const boost::json::object& headers = v.at("headers").as_object();
    auto header = [&](const char* name) {
      const boost::json::value* value = headers.if_contains(name);
      return value == nullptr ? std::string() : std::string(value->as_string());
    };
    delivery.message_id = header("webhook-id");
    delivery.timestamp = header("webhook-timestamp");
    delivery.signature_header = header("webhook-signature");
    now_ = absl::FromUnixSeconds(v.at("now").to_number<int64_t>());
    const bool want_valid = std::string(v.at("expect").as_string()) == "valid";
    const IngestOutcome outcome = EvaluateOk(delivery);
    tally.Check(outcome.verdict == (want_valid ? IngestVerdict::kAccepted : IngestVerdict::kDropped)
                    && outcome.signature_valid == want_valid,
                absl::StrCat(id, ": got reason '", outcome.reason, "'"));
  }
  tally.Report("standard-webhooks verify vectors through IngestEvaluator");
  EXPECT_EQ(tally.failed(), 0);
  EXPECT_GT(tally.passed(), 0);
}

// Records into a FakeIngestStore at once, as the batching writer records into PostgreSQL.
class StoreRecorder final : public store::DecisionRecorder {
 public:
  explicit StoreRecorder(FakeIngestStore& store) : store_(store) {}
  void Record(store::NewDecision next, absl::Time now, Done done) override {
    ++recorded;
    std::move(done)(store_.Record(next, now));
  }
  int recorded = 0;

 private:
  FakeIngestStore& store_;
};

// Issue 21: EvaluateBatched (the decision checked before the write, the write deciding between
// it and a stored one) answers every delivery of a sequence exactly as Evaluate (read, then
// decide, then record) does.
TEST_F(IngestEvaluatorTest, EvaluateBatchedDecidesExactlyAsEvaluate) {
  AddPublisher("feed");
  AddPublisher("trusted", /*verified=*/true);
  FakeIngestStore batched_store;
  IngestEvaluatorOptions options;
  options.clock = [this] { return now_; };
  IngestEvaluator batched(publishers_, batched_store, options);
  StoreRecorder recorder(batched_store);
  batched.SetRecorder(&recorder);

  DeliveryRecord malformed = Signed(Delivery("trusted", "m"));
  malformed.timestamp = "12x";
  const std::vector<DeliveryRecord> sequence = {
      Delivery("feed", "x", true),                      // dropped, unsigned
      Signed(Delivery("feed", "x", true), stranger_),   // its duplicate (badly signed)
      Delivery("feed", "x", true),                      // its duplicate (unsigned)
      Signed(Delivery("feed", "x", true)),              // replaces the unsigned drop
      Delivery("feed", "x", true),                      // a duplicate of the signed acceptance
      Signed(Delivery("feed", "x", true)),              // also
      Delivery("feed", "y"),                            // accepted
      Delivery("feed", "y"),                            // its duplicate
      Delivery("nobody", "z"),                          // unknown publisher
      malformed,                                        // quarantined
      malformed,                                        // its duplicate
      Signed(Delivery("trusted", "m")),                 // replaces the quarantine
  };
  for (size_t i = 0; i < sequence.size(); ++i) {
    const IngestOutcome expected = EvaluateOk(sequence[i]);
    absl::StatusOr<IngestOutcome> got = absl::UnknownError("not answered");
    batched.EvaluateBatched(sequence[i], [&](absl::StatusOr<IngestOutcome> outcome) {
      got = std::move(outcome);
    });
    ASSERT_TRUE(got.ok()) << i << ": " << got.status();
    EXPECT_EQ(got->verdict, expected.verdict) << i;
    EXPECT_EQ(got->reason, expected.reason) << i;
    EXPECT_EQ(got->item_id, expected.item_id) << i;
    EXPECT_EQ(got->signature_valid, expected.signature_valid) << i;
    EXPECT_EQ(got->dead_letter_id.empty(), expected.dead_letter_id.empty()) << i;
  }
  EXPECT_EQ(batched_store.items.size(), ingest_.items.size());
  EXPECT_EQ(batched_store.decisions.size(), ingest_.decisions.size());
  EXPECT_EQ(recorder.recorded, static_cast<int>(sequence.size()) - 1)
      << "every delivery of a known publisher goes to the recorder";

  // A store that cannot answer is UNAVAILABLE, never a drop.
  batched_store.fail_record = absl::InternalError("connection reset");
  absl::StatusOr<IngestOutcome> failed = IngestOutcome();
  batched.EvaluateBatched(Delivery("feed", "w"), [&](absl::StatusOr<IngestOutcome> outcome) {
    failed = std::move(outcome);
  });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
}

// --- C2PA media (issue 19) --------------------------------------------------------------------

constexpr char kTrained[] =
    "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia";

class IngestEvaluatorMediaTest : public IngestEvaluatorTest {
 protected:
  IngestEvaluatorMediaTest() {
    const absl::Time now = absl::FromUnixSeconds(kNow);
    trusted_ = testing::MakeC2paTestCredential("Trusted", now - absl::Hours(24),
                                               now + absl::Hours(24 * 365));
    stranger_signer_ = testing::MakeC2paTestCredential("Stranger", now - absl::Hours(24),
                                                       now + absl::Hours(24 * 365));
    IngestEvaluatorOptions options;
    options.c2pa_trust_anchors = std::make_shared<const c2pa::TrustAnchors>(
        *c2pa::TrustAnchors::FromPem(trusted_.certificate_pem));
    Build(options);
    testing::C2paTestManifest generated;
    generated.digital_source_type = kTrained;
    photo_ =
        testing::SignC2paTestAsset(testing::PlainTestJpeg(), c2pa::MediaType::kJpeg, trusted_, {});
    generated_ = testing::SignC2paTestAsset(testing::PlainTestJpeg(), c2pa::MediaType::kJpeg,
                                            trusted_, generated);
    stranger_generated_ = testing::SignC2paTestAsset(
        testing::PlainTestJpeg(), c2pa::MediaType::kJpeg, stranger_signer_, generated);
    tampered_ = photo_;
    tampered_[testing::JpegScanOffset(tampered_) + 10] ^= 1;
    garbage_ = photo_;
    garbage_[garbage_.find("jumb", garbage_.find("jumb") + 4) - 4] = '\x7F';
  }

  // A delivery with `jpegs` as its media, in the canonical body too (as the gateway sends it).
  static DeliveryRecord WithMedia(const std::string& publisher, const std::string& id,
                                  const std::vector<std::string>& jpegs,
                                  std::optional<bool> synthetic = std::nullopt) {
    DeliveryRecord delivery = Delivery(publisher, id, synthetic);
    std::string elements;
    for (const std::string& jpeg : jpegs) {
      delivery.media.push_back({"image/jpeg", jpeg});
      absl::StrAppend(&elements, elements.empty() ? "" : ",",
                      R"({"content_type":"image/jpeg","data":")", absl::Base64Escape(jpeg),
                      R"("})");
    }
    delivery.raw_body = absl::StrCat(R"({"id":")", id, R"(","media":[)", elements, "]}");
    delivery.canonical_body = delivery.raw_body;
    delivery.content_hash = crypto::ToHex(crypto::Sha256(delivery.canonical_body));
    return delivery;
  }

  testing::C2paTestCredential trusted_, stranger_signer_;
  std::string photo_, generated_, stranger_generated_, tampered_, garbage_;
};

TEST_F(IngestEvaluatorMediaTest, ATrustedManifestIsProvenanceForASyntheticItem) {
  AddPublisher("feed");
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "a", {photo_}, true)).verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(EvaluateOk(Delivery("feed", "b", true)).reason, kReasonUnverifiedSynthetic);
  ASSERT_EQ(ingest_.item_media.size(), 1u);
  ASSERT_EQ(ingest_.item_media[0].size(), 1u);
  EXPECT_EQ(ingest_.item_media[0][0].verdict, "valid");
  EXPECT_EQ(ingest_.item_media[0][0].signer_subject, "CN=Trusted");
  EXPECT_FALSE(ingest_.item_media[0][0].synthetic);
}

TEST_F(IngestEvaluatorMediaTest, AGeneratorDeclarationMakesTheItemSynthetic) {
  AddPublisher("feed");
  // Trusted: synthetic, with provenance, kept and recorded as synthetic.
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "a", {generated_}, false)).verdict,
            IngestVerdict::kAccepted);
  ASSERT_EQ(ingest_.item_media.size(), 1u);
  EXPECT_TRUE(ingest_.item_media[0][0].synthetic);
  EXPECT_EQ(ingest_.item_media[0][0].digital_source_type, kTrained);
  // Untrusted: the manifest fails, a drop naming the code.
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "b", {stranger_generated_}, false)).reason,
            "c2pa_signingCredential.untrusted");
  // A valid trusted image beside a plain one: synthetic, but not every element is vouched for.
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "c", {generated_, testing::PlainTestJpeg()})).reason,
            kReasonUnverifiedSynthetic);
}

TEST_F(IngestEvaluatorMediaTest, FailedManifestsAreDropsEvenWithAValidSignature) {
  AddPublisher("feed");
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "a", {tampered_})).reason,
            "c2pa_assertion.dataHash.mismatch");
  const IngestOutcome signed_tampered = EvaluateOk(Signed(WithMedia("feed", "b", {tampered_})));
  EXPECT_EQ(signed_tampered.verdict, IngestVerdict::kDropped);
  EXPECT_EQ(signed_tampered.reason, "c2pa_assertion.dataHash.mismatch");
  // A valid publisher signature is provenance for a synthetic item whose media has none.
  EXPECT_EQ(EvaluateOk(Signed(WithMedia("feed", "c", {testing::PlainTestJpeg()}, true))).verdict,
            IngestVerdict::kAccepted);
}

TEST_F(IngestEvaluatorMediaTest, RequireC2paForMediaAndThePublishersOwnAnchors) {
  PublisherRecord& feed = AddPublisher("feed");
  feed.settings.require_c2pa_for_media = true;
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "a", {testing::PlainTestJpeg()})).reason,
            "missing_c2pa_manifest");
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "b", {photo_})).verdict, IngestVerdict::kAccepted);
  // No media at all: nothing to require.
  EXPECT_EQ(EvaluateOk(Delivery("feed", "c")).verdict, IngestVerdict::kAccepted);

  PublisherRecord& own = AddPublisher("own");
  own.settings.c2pa_trust = stranger_signer_.certificate_pem;
  EXPECT_EQ(EvaluateOk(WithMedia("own", "a", {stranger_generated_})).verdict,
            IngestVerdict::kAccepted);
  // Another publisher's anchors are not this one's.
  EXPECT_EQ(EvaluateOk(WithMedia("feed", "d", {stranger_generated_})).reason,
            "c2pa_signingCredential.untrusted");
  // A stored list that does not parse adds nothing.
  PublisherRecord& broken = AddPublisher("broken");
  broken.settings.c2pa_trust = "not pem";
  EXPECT_EQ(EvaluateOk(WithMedia("broken", "a", {photo_})).verdict, IngestVerdict::kAccepted);
  EXPECT_EQ(EvaluateOk(WithMedia("broken", "b", {stranger_generated_})).reason,
            "c2pa_signingCredential.untrusted");
}

TEST_F(IngestEvaluatorMediaTest, GarbageIsQuarantinedFromAVerifiedPublisherAndReplayedWithIt) {
  AddPublisher("verified", /*verified=*/true);
  AddPublisher("plain");
  const IngestOutcome quarantined = EvaluateOk(WithMedia("verified", "a", {garbage_}));
  EXPECT_EQ(quarantined.verdict, IngestVerdict::kQuarantined);
  EXPECT_EQ(quarantined.reason, "malformed_c2pa_manifest");
  EXPECT_EQ(EvaluateOk(WithMedia("plain", "a", {garbage_})).reason, "c2pa_general.error");
  // The dead letter keeps the bodies, not the decoded media: a replay reads it from the body and
  // quarantines it again instead of accepting it without its media.
  ingest_.dead_letters[quarantined.dead_letter_id].delivery.media.clear();
  absl::StatusOr<IngestOutcome> replayed = evaluator_->Replay(quarantined.dead_letter_id);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->verdict, IngestVerdict::kQuarantined);
  EXPECT_EQ(replayed->reason, "malformed_c2pa_manifest");
}

TEST(IngestMediaOfBodyTest, ReadsWhatTheGatewayAccepts) {
  const std::vector<store::MediaRecord> media = MediaOfCanonicalBody(
      R"({"id":"x","media":[{"content_type":"image/jpeg","data":"/9j/"},)"
      R"({"content_type":"image/gif","data":"R0lG"},{"content_type":"image/png","data":"!"},)"
      R"({"content_type":"image/png","data":"iVBORw=="}]})");
  ASSERT_EQ(media.size(), 2u);
  EXPECT_EQ(media[0].content_type, "image/jpeg");
  EXPECT_EQ(media[0].data, "\xFF\xD8\xFF");
  EXPECT_EQ(media[1].content_type, "image/png");
  EXPECT_TRUE(MediaOfCanonicalBody(R"({"id":"x"})").empty());
  EXPECT_TRUE(MediaOfCanonicalBody(R"({"id":"x","media":"no"})").empty());
  EXPECT_TRUE(MediaOfCanonicalBody("not json \"media\"").empty());
}

}  // namespace
}  // namespace portcullis::verifier::ingest
