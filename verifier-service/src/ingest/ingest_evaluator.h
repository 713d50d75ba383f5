#pragma once

// The decision on one delivered feed item (DESIGN.md "POST /ingest", issue 6), against the
// publisher and ingest stores. In order:
//   1. publisher lookup, through a short-TTL cache; a failing or timed-out lookup is UNAVAILABLE,
//      never a drop. Unknown or disabled: UNKNOWN_PUBLISHER (nothing recorded), unless
//      registration is not required, in which case it is an unverified publisher without keys.
//   2. idempotency on (publisher, content_hash): an unexpired decision is answered as a
//      duplicate without evaluating again — except that a drop or quarantine without a valid
//      signature does not suppress a delivery that carries a signature: that one is verified, and
//      if the signature is valid it is decided and its decision replaces the old one.
//   3. provenance signature (Standard Webhooks, standard_webhooks.h) against the publisher's
//      active keys. Malformed signature metadata from a *verified* publisher is quarantined into
//      the dead-letter queue; from any other publisher it counts as an invalid signature.
//   4. the rule, first match wins:
//        signature present but invalid             dropped  invalid_provenance_signature
//        require_signature, no valid signature     dropped  signature_required
//        a media ruling (c2pa/media_ruling.h)      dropped  c2pa_<status code>,
//                                                           missing_c2pa_manifest;
//                                                  quarantined malformed_c2pa_manifest
//        synthetic, no valid signature and no
//          valid trusted C2PA provenance           dropped  unverified_synthetic_content
//        otherwise                                 accepted
//      (synthetic: is_synthetic true, or digital_source_type ending in trainedAlgorithmicMedia or
//      compositeWithTrainedAlgorithmicMedia, or a media element's valid C2PA manifest declaring
//      one). Media manifests are checked against the server's trust anchors plus the
//      publisher's own (c2pa_trust); what was verified is kept with an accepted item.
//   5. record: the decision and, when accepted, the item (quarantined: the dead letter; dropped,
//      when the publisher keeps drops: the delivery in the drop ledger, if its cap has room), in
//      one transaction, before answering; a concurrent identical delivery that recorded first
//      makes this one a duplicate of it.
// Any store failure is UNAVAILABLE (DEADLINE_EXCEEDED stays DEADLINE_EXCEEDED): retryable.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"
#include "verifier-service/src/c2pa/trust_anchors.h"
#include "verifier-service/src/ingest/standard_webhooks.h"
#include "verifier-service/src/store/ingest_store.h"
#include "verifier-service/src/store/publisher_store.h"

namespace portcullis::verifier::ingest {

// Reasons (EvaluateIngestResponse.reason).
inline constexpr char kReasonUnknownPublisher[] = "unknown_publisher";
inline constexpr char kReasonInvalidSignature[] = "invalid_provenance_signature";
inline constexpr char kReasonSignatureRequired[] = "signature_required";
inline constexpr char kReasonUnverifiedSynthetic[] = "unverified_synthetic_content";
inline constexpr char kReasonMalformedSignature[] = "malformed_provenance_signature";
inline constexpr char kReasonMissingId[] = "missing_provenance_id";
inline constexpr char kReasonMalformedId[] = "malformed_provenance_id";
inline constexpr char kReasonMissingTimestamp[] = "missing_provenance_timestamp";
inline constexpr char kReasonMalformedTimestamp[] = "malformed_provenance_timestamp";

enum class IngestVerdict { kAccepted, kDropped, kDuplicate, kQuarantined, kUnknownPublisher };

struct IngestOutcome {
  IngestVerdict verdict = IngestVerdict::kDropped;
  // Dropped / quarantined: the reason; duplicate: the original decision ("accepted",
  // "dropped:<reason>", "quarantined:<reason>"); unknown publisher: "unknown_publisher".
  std::string reason;
  std::string item_id;  // Duplicate: the original's.
  std::string content_hash;
  bool signature_valid = false;  // Duplicate: the original's.
  std::string dead_letter_id;    // Quarantined only.
};

// What ReevaluateDrops did (on a dry run: would do), counted in ledger rows.
struct DropReevaluation {
  int64_t matched = 0;        // Rows of the ledger that matched the filter.
  int64_t accepted = 0;       // Rows whose item is accepted now; they left the ledger.
  int64_t still_dropped = 0;  // Rows still not valid; they stay in the ledger.
};

// True for is_synthetic true or an IPTC synthetic digital source type.
bool IsSynthetic(const std::optional<bool>& is_synthetic, absl::string_view digital_source_type);

// The `media` of a stored canonical body, decoded (what the gateway sent as
// EvaluateIngestRequest.media), for deciding a stored delivery again (Replay, ReevaluateDrops);
// elements that do not read as the gateway accepts them are left out.
std::vector<store::MediaRecord> MediaOfCanonicalBody(absl::string_view canonical_body);

// The quarantine reason for a malformed-metadata failure (IsMalformedSignatureMetadata).
const char* MalformedMetadataReason(SignatureFailure failure);

struct IngestEvaluatorOptions {
  // False: an unknown or disabled publisher is evaluated as unverified and keyless instead of
  // being answered UNKNOWN_PUBLISHER.
  bool require_registration = true;
  // Retention of a decision when the publisher sets none.
  absl::Duration default_retention = absl::Hours(72);
  // How long a publisher lookup (found or not) is reused.
  absl::Duration publisher_cache_ttl = absl::Seconds(5);
  // Cached publishers at most; beyond, the cache starts over.
  size_t publisher_cache_max_entries = 10000;
  // Header size, tokens examined, timestamp tolerance.
  SignatureLimits signature_limits;
  // Bytes one publisher's drop ledger holds at most (store::DropLedgerBytes); a drop that does
  // not fit is not kept.
  int64_t drop_ledger_max_bytes = int64_t{64} << 20;
  // The C2PA trust anchors of every publisher (--c2pa_trust_anchors); null: none.
  std::shared_ptr<const c2pa::TrustAnchors> c2pa_trust_anchors;
  // Sizes and counts of a media element's C2PA manifest.
  c2pa::C2paLimits c2pa_limits;
  // Now; tests inject a fake.
  std::function<absl::Time()> clock = [] { return absl::Now(); };
};

// Thread-safe; the stores block, so call it from a blocking pool. The stores must outlive it.
class IngestEvaluator {
 public:
  IngestEvaluator(store::PublisherStore& publishers, store::IngestStore& ingest,
                  IngestEvaluatorOptions options = {});

  // Decisions of EvaluateBatched go to `recorder` (which must outlive this); set before the
  // first call.
  void SetRecorder(store::DecisionRecorder* recorder) { recorder_ = recorder; }

  // Decides `delivery` (a request already validated) and records the decision.
  absl::StatusOr<IngestOutcome> Evaluate(const store::DeliveryRecord& delivery);

  using Done = absl::AnyInvocable<void(absl::StatusOr<IngestOutcome>) &&>;
  // What Evaluate answers, through the batching recorder (issue 21): the publisher lookup and
  // the signature check run here (they may block on a publisher cache miss: call it from a
  // blocking pool), then the decision goes to the recorder and this returns; `done` runs when
  // its batch has committed, on the recorder's thread. Without a recorder, Evaluate.
  void EvaluateBatched(const store::DeliveryRecord& delivery, Done done);

  // Decides a quarantined delivery again with the publisher's current settings and keys (its
  // timestamp is judged against the time it was received, not now) and records the decision,
  // replacing its quarantine. The dead letter is removed unless it is quarantined again.
  // NOT_FOUND when no dead letter has that id.
  absl::StatusOr<IngestOutcome> Replay(const std::string& dead_letter_id);

  // Decides the drop ledger's rows matching `filter` again, oldest first, with the publisher's
  // current settings and keys (each signature's timestamp judged against the time its delivery
  // was received, not now). An accepted one is recorded as Replay records (idempotent by the
  // content hash: an item is accepted once) and its rows leave the ledger; one still not valid
  // stays, and nothing is written for it. `dry_run`: decides, records nothing. FAILED_PRECONDITION
  // when the publisher is unknown or disabled (registration required).
  absl::StatusOr<DropReevaluation> ReevaluateDrops(const store::DropFilter& filter, bool dry_run);

  // Drops the cached lookup of `name` (after an admin change in this process).
  void ForgetPublisher(const std::string& name);

  const IngestEvaluatorOptions& options() const { return options_; }

 private:
  // One lookup's result as cached: the record and its active keys decoded once (Ed25519 points
  // parsed), newest first, with the index of the key that verified last (tried first: a
  // publisher signs with one key at a time, so a delivery costs one verification, not one per
  // active key). Built from the record, so a revoked key goes when the record does.
  struct KnownPublisher {
    std::optional<store::PublisherRecord> record;
    std::vector<VerificationKey> keys;
    mutable std::atomic<size_t> preferred_key{0};
    // The server's C2PA anchors plus the publisher's own.
    c2pa::TrustAnchors c2pa_anchors;
  };
  using KnownPublisherPtr = std::shared_ptr<const KnownPublisher>;

  // The publisher, or null when it is unknown or disabled and registration is required.
  absl::StatusOr<KnownPublisherPtr> Publisher(const std::string& name, absl::Time now);
  absl::StatusOr<KnownPublisherPtr> LookUp(const std::string& name, absl::Time now);
  // The server's anchors plus those of `publisher` (a list that does not parse adds none).
  c2pa::TrustAnchors AnchorsFor(const store::PublisherRecord& publisher) const;
  // The decision on `delivery`, to record; `signature_time` judges the timestamp window.
  store::NewDecision Decide(const KnownPublisher& publisher, const store::DeliveryRecord& delivery,
                            absl::Time signature_time, absl::Time now,
                            const std::string& replay_of) const;
  // The outcome of recording `decision` (a duplicate when another decision stayed).
  static absl::StatusOr<IngestOutcome> OutcomeOf(const store::DecisionRecord& decision,
                                                 absl::StatusOr<store::RecordResult> recorded);
  // Decides and records; `signature_time` judges the timestamp window.
  absl::StatusOr<IngestOutcome> DecideAndRecord(const KnownPublisher& publisher,
                                                const store::DeliveryRecord& delivery,
                                                absl::Time signature_time, absl::Time now,
                                                const std::string& replay_of);

  store::PublisherStore& publishers_;
  store::IngestStore& ingest_;
  store::DecisionRecorder* recorder_ = nullptr;
  const IngestEvaluatorOptions options_;

  struct CacheEntry {
    KnownPublisherPtr publisher;
    absl::Time fetched_at;
  };
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, CacheEntry> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace portcullis::verifier::ingest
