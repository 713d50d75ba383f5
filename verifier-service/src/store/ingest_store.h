#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace portcullis::verifier::store {

// What was decided about one (publisher, content hash).
enum class StoredDecision { kAccepted, kDropped, kQuarantined };

// "accepted", "dropped", "quarantined" (as stored).
inline const char* StoredDecisionName(StoredDecision decision) {
  switch (decision) {
    case StoredDecision::kAccepted:
      return "accepted";
    case StoredDecision::kDropped:
      return "dropped";
    case StoredDecision::kQuarantined:
      return "quarantined";
  }
  return "dropped";
}

// An idempotency record.
struct DecisionRecord {
  std::string publisher;
  std::string content_hash;  // 64 lowercase hex characters.
  std::string item_id;
  StoredDecision decision = StoredDecision::kDropped;
  std::string reason;  // Empty for accepted.
  bool signature_valid = false;
  std::string dead_letter_id;  // Set for quarantined.
  absl::Time decided_at;
  absl::Time expires_at;
};

// One media element of a delivery (issue 19), decoded: `image/jpeg` or `image/png`.
struct MediaRecord {
  std::string content_type;
  std::string data;
};

// What the C2PA validator found in one media element of an accepted item (kept as jsonb).
struct MediaVerificationRecord {
  std::string content_type;
  std::string verdict;  // no_manifest, malformed, invalid, valid
  std::vector<std::string> status_codes;
  std::string signer_subject;
  std::string claim_generator;
  std::string digital_source_type;
  bool synthetic = false;
};

// One delivery as received: what an accepted item and a dead letter keep.
struct DeliveryRecord {
  std::string publisher;
  std::string item_id;
  std::string content_hash;
  std::string signature_header;
  std::string message_id;
  std::string timestamp;
  std::string raw_body;
  std::string canonical_body;
  std::optional<bool> is_synthetic;
  std::string digital_source_type;
  // The item's media, decoded (not stored: it is in the bodies).
  std::vector<MediaRecord> media;
};

struct DeadLetterRecord {
  std::string dead_letter_id;
  std::string reason;
  DeliveryRecord delivery;
  absl::Time created_at;
};

// Keyset position in the dead-letter queue (oldest first).
struct DeadLetterPosition {
  absl::Time created_at;
  std::string dead_letter_id;
};

struct AcceptedItemRecord {
  int64_t cursor = 0;
  std::string publisher;
  std::string item_id;
  std::string content_hash;
  std::string canonical_body;
  bool signature_valid = false;
  absl::Time accepted_at;
  // Per media element, in order: what was verified.
  std::vector<MediaVerificationRecord> media;
};

// A dropped delivery kept in the drop ledger (issue 17), for re-evaluation.
struct DroppedDeliveryRecord {
  std::string drop_id;  // A UUID.
  std::string reason;   // The drop's reason.
  DeliveryRecord delivery;
  absl::Time received_at;  // When the drop was decided: a signature is judged against it.
  absl::Time expires_at;   // received_at + the publisher's keep_drops.
};

// Which ledger rows ListDrops reads: one publisher's, of one reason (empty: any), received at or
// after `since` (InfinitePast: any).
struct DropFilter {
  std::string publisher;
  std::string reason;
  absl::Time since = absl::InfinitePast();
};

// Keyset position in a publisher's ledger (oldest first).
struct DropPosition {
  absl::Time received_at;
  std::string drop_id;
};

// What a kept drop counts against its publisher's ledger cap: its bodies and every header kept.
inline int64_t DropLedgerBytes(const DeliveryRecord& delivery) {
  return static_cast<int64_t>(delivery.raw_body.size() + delivery.canonical_body.size() +
                              delivery.signature_header.size() + delivery.message_id.size() +
                              delivery.timestamp.size() + delivery.item_id.size() +
                              delivery.digital_source_type.size());
}

// A decision to record. `decision.dead_letter_id` is ignored (the store assigns one).
struct NewDecision {
  DecisionRecord decision;
  DeliveryRecord delivery;
  // Set when this decision comes from replaying that dead letter (see Record).
  std::string replay_of;
  // A recorded drop is kept in the drop ledger for this long (zero: not kept), when its
  // publisher's ledger has room: DropLedgerBytes of all its rows at most drop_ledger_max_bytes
  // (a drop that does not fit is not kept; the older ones stay).
  absl::Duration keep_drop_for = absl::ZeroDuration();
  int64_t drop_ledger_max_bytes = 0;
  // Set (a ledger row id) when this decision re-evaluates that dropped delivery (see Record).
  std::string reevaluation_of;
  // Kept with an accepted item: what was verified of each media element.
  std::vector<MediaVerificationRecord> media_verification;
};

// A decision to record as judged at `now` (whether a stored decision has expired): what
// DecisionRecorder::Record takes, one item of a batch.
struct DecisionAt {
  NewDecision next;
  absl::Time now;
};

struct RecordResult {
  // False when an unexpired decision that may not be replaced was there: `decision` is that one
  // (a duplicate).
  bool recorded = false;
  DecisionRecord decision;
  // True when the drop went into the drop ledger (keep_drop_for set and it fitted the cap).
  bool drop_kept = false;
};

// Ingest decisions, the outbox of accepted items and the dead-letter queue. Implementations are
// thread-safe and block; call them from a blocking pool. Errors: UNAVAILABLE / DEADLINE_EXCEEDED
// retryable, INTERNAL otherwise, plus those named per method.
class IngestStore {
 public:
  virtual ~IngestStore() = default;

  // The decision on (publisher, content_hash) that has not expired at `now`; nullopt if none.
  virtual absl::StatusOr<std::optional<DecisionRecord>> FindDecision(
      const std::string& publisher, const std::string& content_hash, absl::Time now) = 0;

  // In ONE transaction: records `next.decision` and, when it is accepted, the item in the outbox
  // (and deletes the dead letters of the same publisher and content hash: nothing is left to
  // decide about them); when it is quarantined, the delivery in the dead-letter queue. An existing decision on the
  // same (publisher, content_hash) is replaced only when
  //   - it has expired at `now` (expired decisions are not duplicates), or
  //   - the new decision has a valid signature and the old one is a drop or quarantine without
  //     one (an unsigned copy cannot suppress a validly signed delivery), or
  //   - it is the quarantine of `next.replay_of` (a replay decides again).
  // Otherwise nothing is written and the existing decision is returned (`recorded` false).
  // Concurrent calls for the same key are serialized by the key: one records, the others see it.
  // With `replay_of` set, the dead letter is kept (with the new reason) when the outcome is
  // quarantined again with it, and deleted otherwise (also when the outcome is a duplicate).
  // With `reevaluation_of` set (only for an accepted decision), a stored drop of the same key is
  // replaced too (re-evaluation decides again), and when the item is accepted (by this decision
  // or an earlier one) the ledger rows of its key leave the ledger; otherwise nothing changes.
  // A recorded drop with `keep_drop_for` is kept in the drop ledger in the same transaction.
  virtual absl::StatusOr<RecordResult> Record(const NewDecision& next, absl::Time now) = 0;

  // Up to `limit` dropped deliveries of the ledger matching `filter`, after `after` (nullopt:
  // from the oldest), oldest first.
  virtual absl::StatusOr<std::vector<DroppedDeliveryRecord>> ListDrops(
      const DropFilter& filter, const std::optional<DropPosition>& after, int limit) = 0;

  // Up to `limit` dead letters after `after` (nullopt: from the oldest), oldest first, only
  // `publisher`'s unless it is empty.
  virtual absl::StatusOr<std::vector<DeadLetterRecord>> ListDeadLetters(
      const std::string& publisher, const std::optional<DeadLetterPosition>& after,
      int limit) = 0;

  // nullopt when no dead letter has that id (a UUID).
  virtual absl::StatusOr<std::optional<DeadLetterRecord>> GetDeadLetter(
      const std::string& dead_letter_id) = 0;

  // NOT_FOUND when no dead letter has that id.
  virtual absl::Status DiscardDeadLetter(const std::string& dead_letter_id) = 0;

  // Up to `limit` accepted items with a cursor after `after_cursor`, in cursor order. Cursors
  // are assigned in commit order, so a consumer paging by cursor never skips an item.
  virtual absl::StatusOr<std::vector<AcceptedItemRecord>> ListAcceptedItems(int64_t after_cursor,
                                                                            int limit) = 0;
};

// Decisions recorded once they are durable, without a thread waiting for each (IngestWriter
// batches them; issue 21).
class DecisionRecorder {
 public:
  using Done = absl::AnyInvocable<void(absl::StatusOr<RecordResult>) &&>;
  virtual ~DecisionRecorder() = default;

  // Calls `done` exactly once, from any thread, with what IngestStore::Record answers for
  // `next` at `now`; UNAVAILABLE when the recorder is overloaded or stopping.
  virtual void Record(NewDecision next, absl::Time now, Done done) = 0;
};

}  // namespace portcullis::verifier::store
