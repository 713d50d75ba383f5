#include "verifier-service/src/ingest/ingest_evaluator.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "boost/json/parse.hpp"
#include "common/crypto/base64.h"
#include "common/logging/log.h"
#include "verifier-service/src/c2pa/media_ruling.h"

namespace portcullis::verifier::ingest {
namespace {

using store::DecisionRecord;
using store::DeliveryRecord;
using store::PublisherRecord;
using store::StoredDecision;

// Any store failure is retryable for the sender: never a drop.
absl::Status Transient(const absl::Status& status) {
  if (absl::IsDeadlineExceeded(status) || absl::IsUnavailable(status)) {
    return status;
  }
  return absl::UnavailableError(
      absl::StrCat("ingest store unavailable: ", status.message()));
}

// What the signature check found.
struct SignatureCheck {
  enum class Kind { kUnsigned, kValid, kInvalid, kMalformed } kind = Kind::kUnsigned;
  std::string malformed_reason;  // kMalformed: the quarantine reason.
};

bool HasSignature(const DeliveryRecord& delivery) {
  return !absl::StripAsciiWhitespace(delivery.signature_header).empty();
}

// Verifies against `keys` (decoded, newest first), the one that verified last tried first; on
// success that key becomes the first to try.
SignatureCheck CheckSignature(const std::vector<VerificationKey>& keys,
                              std::atomic<size_t>& preferred_key, const DeliveryRecord& delivery,
                              absl::Time now, const SignatureLimits& limits) {
  if (!HasSignature(delivery)) {
    return {};
  }
  const size_t preferred = preferred_key.load(std::memory_order_relaxed);
  std::vector<VerificationKey> reordered;
  if (preferred != 0 && preferred < keys.size()) {
    reordered.reserve(keys.size());
    reordered.push_back(keys[preferred]);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i != preferred) {
        reordered.push_back(keys[i]);
      }
    }
  }
  const absl::StatusOr<VerifiedSignature> verified =
      VerifyDelivery({delivery.message_id, delivery.timestamp, delivery.signature_header,
                      delivery.raw_body},
                     reordered.empty() ? keys : reordered, now, limits);
  if (verified.ok()) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].id == verified->key_id) {
        if (i != preferred) {
          preferred_key.store(i, std::memory_order_relaxed);
        }
        break;
      }
    }
    return {SignatureCheck::Kind::kValid, ""};
  }
  const std::optional<SignatureFailure> failure = SignatureFailureOf(verified.status());
  if (failure.has_value() && IsMalformedSignatureMetadata(*failure)) {
    return {SignatureCheck::Kind::kMalformed, MalformedMetadataReason(*failure)};
  }
  if (failure == SignatureFailure::kNoSignature) {
    return {};
  }
  return {SignatureCheck::Kind::kInvalid, ""};
}

// The active keys of `publisher`, decoded, newest first.
std::vector<VerificationKey> ActiveKeys(const PublisherRecord& publisher) {
  std::vector<const store::PublisherKeyRecord*> active;
  for (const store::PublisherKeyRecord& key : publisher.keys) {
    if (key.active()) {
      active.push_back(&key);
    }
  }
  std::stable_sort(active.begin(), active.end(),
                   [](const store::PublisherKeyRecord* a, const store::PublisherKeyRecord* b) {
                     return a->created_at > b->created_at;
                   });
  std::vector<VerificationKey> keys;
  keys.reserve(active.size());
  for (const store::PublisherKeyRecord* key : active) {
    keys.push_back({key->key_id,
                    key->algorithm == store::kEd25519Algorithm ? SignatureVersion::kV1a
                                                               : SignatureVersion::kV1,
                    key->material});
    PrepareVerificationKey(keys.back());
  }
  return keys;
}

// A drop or quarantine without a valid signature: a validly signed delivery replaces it.
bool Replaceable(const DecisionRecord& decision) {
  return decision.decision != StoredDecision::kAccepted && !decision.signature_valid;
}

IngestOutcome Duplicate(const DecisionRecord& original, const std::string& content_hash) {
  IngestOutcome outcome;
  outcome.verdict = IngestVerdict::kDuplicate;
  outcome.reason = StoredDecisionName(original.decision);
  if (!original.reason.empty()) {
    absl::StrAppend(&outcome.reason, ":", original.reason);
  }
  outcome.item_id = original.item_id;
  outcome.content_hash = content_hash;
  outcome.signature_valid = original.signature_valid;
  return outcome;
}

PublisherRecord ImplicitPublisher(const std::string& name) {
  PublisherRecord publisher;
  publisher.settings.name = name;
  return publisher;
}

c2pa::MediaType MediaTypeOf(const std::string& content_type) {
  return content_type == "image/png" ? c2pa::MediaType::kPng : c2pa::MediaType::kJpeg;
}

store::MediaVerificationRecord VerificationRecord(const c2pa::ValidationResult& result) {
  store::MediaVerificationRecord record;
  record.content_type = result.media_type == c2pa::MediaType::kPng ? "image/png" : "image/jpeg";
  record.verdict = std::string(c2pa::VerdictName(result.verdict));
  for (const c2pa::ValidationStatus& status : result.statuses) {
    record.status_codes.push_back(status.code);
  }
  record.signer_subject = result.signer_subject;
  record.claim_generator = result.claim_generator;
  record.digital_source_type = result.digital_source_type;
  record.synthetic = result.verdict == c2pa::Verdict::kValid &&
                     c2pa::IsAiDigitalSourceType(result.digital_source_type);
  return record;
}

}  // namespace

bool IsSynthetic(const std::optional<bool>& is_synthetic, absl::string_view digital_source_type) {
  if (is_synthetic.value_or(false)) {
    return true;
  }
  return absl::EndsWith(digital_source_type, "trainedAlgorithmicMedia") ||
         absl::EndsWith(digital_source_type, "compositeWithTrainedAlgorithmicMedia");
}

std::vector<store::MediaRecord> MediaOfCanonicalBody(absl::string_view canonical_body) {
  std::vector<store::MediaRecord> media;
  if (canonical_body.find("\"media\"") == absl::string_view::npos) {
    return media;
  }
  boost::system::error_code error;
  const boost::json::value body = boost::json::parse(
      boost::json::string_view(canonical_body.data(), canonical_body.size()), error);
  if (error || !body.is_object()) {
    return media;
  }
  const boost::json::value* elements = body.as_object().if_contains("media");
  if (elements == nullptr || !elements->is_array()) {
    return media;
  }
  for (const boost::json::value& element : elements->as_array()) {
    const boost::json::object* object = element.if_object();
    if (object == nullptr) {
      continue;
    }
    const boost::json::value* type = object->if_contains("content_type");
    const boost::json::value* data = object->if_contains("data");
    if (type == nullptr || data == nullptr || !type->is_string() || !data->is_string()) {
      continue;
    }
    absl::StatusOr<std::string> decoded = crypto::DecodeBase64Strict(
        absl::string_view(data->as_string().data(), data->as_string().size()));
    if (!decoded.ok() || (type->as_string() != "image/jpeg" && type->as_string() != "image/png")) {
      continue;
    }
    media.push_back({std::string(type->as_string()), *std::move(decoded)});
  }
  return media;
}

const char* MalformedMetadataReason(SignatureFailure failure) {
  switch (failure) {
    case SignatureFailure::kMissingId:
      return kReasonMissingId;
    case SignatureFailure::kMalformedId:
      return kReasonMalformedId;
    case SignatureFailure::kMissingTimestamp:
      return kReasonMissingTimestamp;
    case SignatureFailure::kMalformedTimestamp:
      return kReasonMalformedTimestamp;
    default:
      return kReasonMalformedSignature;
  }
}

IngestEvaluator::IngestEvaluator(store::PublisherStore& publishers, store::IngestStore& ingest,
                                 IngestEvaluatorOptions options)
    : publishers_(publishers), ingest_(ingest), options_(std::move(options)) {}

void IngestEvaluator::ForgetPublisher(const std::string& name) {
  absl::MutexLock lock(&mu_);
  cache_.erase(name);
}

absl::StatusOr<IngestEvaluator::KnownPublisherPtr> IngestEvaluator::LookUp(
    const std::string& name, absl::Time now) {
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(name);
    if (it != cache_.end() && now - it->second.fetched_at < options_.publisher_cache_ttl &&
        now >= it->second.fetched_at) {
      return it->second.publisher;
    }
  }
  absl::StatusOr<std::optional<PublisherRecord>> found = publishers_.GetPublisher(name);
  if (!found.ok()) {
    return Transient(found.status());
  }
  auto known = std::make_shared<KnownPublisher>();
  if (found->has_value()) {
    known->keys = ActiveKeys(**found);
    known->c2pa_anchors = AnchorsFor(**found);
  } else if (options_.c2pa_trust_anchors != nullptr) {
    known->c2pa_anchors = *options_.c2pa_trust_anchors;
  }
  known->record = *std::move(found);
  absl::MutexLock lock(&mu_);
  if (cache_.size() >= options_.publisher_cache_max_entries) {
    cache_.clear();
  }
  cache_[name] = CacheEntry{known, now};
  return KnownPublisherPtr(std::move(known));
}

c2pa::TrustAnchors IngestEvaluator::AnchorsFor(const PublisherRecord& publisher) const {
  c2pa::TrustAnchors anchors;
  if (options_.c2pa_trust_anchors != nullptr) {
    anchors = *options_.c2pa_trust_anchors;
  }
  if (publisher.settings.c2pa_trust.empty()) {
    return anchors;
  }
  absl::StatusOr<c2pa::TrustAnchors> own =
      c2pa::TrustAnchors::FromPem(publisher.settings.c2pa_trust);
  if (!own.ok()) {
    // UpdatePublisher refuses such a list; one stored before is ignored, never trusted.
    logging::Warn("publisher={} c2pa_trust does not parse: {}", publisher.settings.name,
                  own.status().ToString());
    return anchors;
  }
  return c2pa::TrustAnchors::Union(anchors, *own);
}

absl::StatusOr<IngestEvaluator::KnownPublisherPtr> IngestEvaluator::Publisher(
    const std::string& name, absl::Time now) {
  absl::StatusOr<KnownPublisherPtr> found = LookUp(name, now);
  if (!found.ok()) {
    return found.status();
  }
  if ((*found)->record.has_value() && (*found)->record->enabled) {
    return found;
  }
  if (options_.require_registration) {
    return KnownPublisherPtr();
  }
  auto implicit = std::make_shared<KnownPublisher>();
  implicit->record = ImplicitPublisher(name);
  if (options_.c2pa_trust_anchors != nullptr) {
    implicit->c2pa_anchors = *options_.c2pa_trust_anchors;
  }
  return KnownPublisherPtr(std::move(implicit));
}

absl::StatusOr<IngestOutcome> IngestEvaluator::Evaluate(const DeliveryRecord& delivery) {
  const absl::Time now = options_.clock();
  absl::StatusOr<KnownPublisherPtr> publisher = Publisher(delivery.publisher, now);
  if (!publisher.ok()) {
    return publisher.status();
  }
  if (*publisher == nullptr) {
    IngestOutcome outcome;
    outcome.verdict = IngestVerdict::kUnknownPublisher;
    outcome.reason = kReasonUnknownPublisher;
    outcome.item_id = delivery.item_id;
    outcome.content_hash = delivery.content_hash;
    return outcome;
  }
  absl::StatusOr<std::optional<DecisionRecord>> existing =
      ingest_.FindDecision(delivery.publisher, delivery.content_hash, now);
  if (!existing.ok()) {
    return Transient(existing.status());
  }
  if (existing->has_value()) {
    if (!HasSignature(delivery) || !Replaceable(**existing)) {
      return Duplicate(**existing, delivery.content_hash);
    }
    // Only a valid signature may replace an unsigned (or badly signed) drop.
    if (CheckSignature((*publisher)->keys, (*publisher)->preferred_key, delivery, now,
                       options_.signature_limits)
            .kind != SignatureCheck::Kind::kValid) {
      return Duplicate(**existing, delivery.content_hash);
    }
  }
  return DecideAndRecord(**publisher, delivery, now, now, "");
}

absl::StatusOr<IngestOutcome> IngestEvaluator::Replay(const std::string& dead_letter_id) {
  absl::StatusOr<std::optional<store::DeadLetterRecord>> letter =
      ingest_.GetDeadLetter(dead_letter_id);
  if (!letter.ok()) {
    return Transient(letter.status());
  }
  if (!letter->has_value()) {
    return absl::NotFoundError("no dead letter has that id");
  }
  DeliveryRecord& delivery = (*letter)->delivery;
  // The media is not stored apart from the bodies.
  delivery.media = MediaOfCanonicalBody(delivery.canonical_body);
  const absl::Time now = options_.clock();
  // Replays are administrative: read the publisher afresh.
  ForgetPublisher(delivery.publisher);
  absl::StatusOr<KnownPublisherPtr> publisher = Publisher(delivery.publisher, now);
  if (!publisher.ok()) {
    return publisher.status();
  }
  if (*publisher == nullptr) {
    IngestOutcome outcome;
    outcome.verdict = IngestVerdict::kUnknownPublisher;
    outcome.reason = kReasonUnknownPublisher;
    outcome.item_id = delivery.item_id;
    outcome.content_hash = delivery.content_hash;
    return outcome;
  }
  return DecideAndRecord(**publisher, delivery, (*letter)->created_at, now, dead_letter_id);
}

store::NewDecision IngestEvaluator::Decide(const KnownPublisher& known,
                                          const DeliveryRecord& delivery,
                                          absl::Time signature_time, absl::Time now,
                                          const std::string& replay_of) const {
  const PublisherRecord& publisher = *known.record;
  SignatureCheck signature = CheckSignature(known.keys, known.preferred_key, delivery,
                                            signature_time, options_.signature_limits);
  if (signature.kind == SignatureCheck::Kind::kMalformed && !publisher.settings.verified) {
    signature.kind = SignatureCheck::Kind::kInvalid;
  }
  const bool valid = signature.kind == SignatureCheck::Kind::kValid;

  store::NewDecision next;
  next.delivery = delivery;
  next.replay_of = replay_of;
  DecisionRecord& decision = next.decision;
  decision.publisher = delivery.publisher;
  decision.content_hash = delivery.content_hash;
  decision.item_id = delivery.item_id;
  decision.signature_valid = valid;
  decision.decided_at = now;
  const int64_t retention_seconds = publisher.settings.retention_seconds;
  decision.expires_at = now + (retention_seconds > 0 ? absl::Seconds(retention_seconds)
                                                     : options_.default_retention);
  if (signature.kind == SignatureCheck::Kind::kMalformed) {
    decision.decision = StoredDecision::kQuarantined;
    decision.reason = signature.malformed_reason;
  } else if (signature.kind == SignatureCheck::Kind::kInvalid) {
    decision.decision = StoredDecision::kDropped;
    decision.reason = kReasonInvalidSignature;
  } else if (publisher.settings.require_signature && !valid) {
    decision.decision = StoredDecision::kDropped;
    decision.reason = kReasonSignatureRequired;
  } else {
    std::vector<c2pa::MediaElement> media;
    media.reserve(delivery.media.size());
    for (const store::MediaRecord& element : delivery.media) {
      media.push_back({MediaTypeOf(element.content_type), element.data});
    }
    const c2pa::MediaRuling ruling =
        media.empty() ? c2pa::MediaRuling{}
                      : c2pa::RuleOnMedia(
                            media, known.c2pa_anchors, now,
                            {.publisher_verified = publisher.settings.verified,
                             .require_c2pa_for_media = publisher.settings.require_c2pa_for_media},
                            options_.c2pa_limits);
    const bool synthetic =
        IsSynthetic(delivery.is_synthetic, delivery.digital_source_type) || ruling.synthetic;
    if (ruling.action == c2pa::MediaRuling::Action::kQuarantine) {
      decision.decision = StoredDecision::kQuarantined;
      decision.reason = ruling.reason;
    } else if (ruling.action == c2pa::MediaRuling::Action::kDrop) {
      decision.decision = StoredDecision::kDropped;
      decision.reason = ruling.reason;
    } else if (synthetic && !valid && !ruling.provenance_valid) {
      decision.decision = StoredDecision::kDropped;
      decision.reason = kReasonUnverifiedSynthetic;
    } else {
      decision.decision = StoredDecision::kAccepted;
      for (const c2pa::ValidationResult& result : ruling.results) {
        next.media_verification.push_back(VerificationRecord(result));
      }
    }
  }
  if (decision.decision == StoredDecision::kDropped && publisher.settings.keep_drops_seconds > 0) {
    next.keep_drop_for = absl::Seconds(publisher.settings.keep_drops_seconds);
    next.drop_ledger_max_bytes = options_.drop_ledger_max_bytes;
  }
  return next;
}

absl::StatusOr<DropReevaluation> IngestEvaluator::ReevaluateDrops(const store::DropFilter& filter,
                                                                  bool dry_run) {
  constexpr int kPage = 500;
  const absl::Time now = options_.clock();
  // Re-evaluation is administrative: read the publisher afresh.
  ForgetPublisher(filter.publisher);
  absl::StatusOr<KnownPublisherPtr> publisher = Publisher(filter.publisher, now);
  if (!publisher.ok()) {
    return publisher.status();
  }
  if (*publisher == nullptr) {
    return absl::FailedPreconditionError(
        "the publisher is unknown or disabled: nothing of it can be accepted");
  }
  DropReevaluation result;
  std::optional<store::DropPosition> after;
  for (;;) {
    absl::StatusOr<std::vector<store::DroppedDeliveryRecord>> page =
        ingest_.ListDrops(filter, after, kPage);
    if (!page.ok()) {
      return Transient(page.status());
    }
    for (store::DroppedDeliveryRecord& drop : *page) {
      ++result.matched;
      drop.delivery.media = MediaOfCanonicalBody(drop.delivery.canonical_body);
      store::NewDecision next = Decide(**publisher, drop.delivery, drop.received_at, now, "");
      if (next.decision.decision != StoredDecision::kAccepted) {
        ++result.still_dropped;
        continue;
      }
      if (dry_run) {
        ++result.accepted;
        continue;
      }
      next.keep_drop_for = absl::ZeroDuration();
      next.reevaluation_of = drop.drop_id;
      absl::StatusOr<store::RecordResult> recorded = ingest_.Record(next, now);
      if (!recorded.ok()) {
        return Transient(recorded.status());
      }
      if (recorded->recorded || recorded->decision.decision == StoredDecision::kAccepted) {
        ++result.accepted;
      } else {
        ++result.still_dropped;
      }
    }
    if (static_cast<int>(page->size()) < kPage) {
      break;
    }
    after = store::DropPosition{page->back().received_at, page->back().drop_id};
  }
  return result;
}

absl::StatusOr<IngestOutcome> IngestEvaluator::OutcomeOf(
    const DecisionRecord& decision, absl::StatusOr<store::RecordResult> recorded) {
  if (!recorded.ok()) {
    return Transient(recorded.status());
  }
  if (!recorded->recorded) {
    return Duplicate(recorded->decision, decision.content_hash);
  }
  IngestOutcome outcome;
  switch (decision.decision) {
    case StoredDecision::kAccepted:
      outcome.verdict = IngestVerdict::kAccepted;
      break;
    case StoredDecision::kDropped:
      outcome.verdict = IngestVerdict::kDropped;
      break;
    case StoredDecision::kQuarantined:
      outcome.verdict = IngestVerdict::kQuarantined;
      outcome.dead_letter_id = recorded->decision.dead_letter_id;
      logging::Info("ingest quarantined publisher={} reason={} dead_letter={}",
                    decision.publisher, decision.reason, outcome.dead_letter_id);
      break;
  }
  outcome.reason = decision.reason;
  outcome.item_id = decision.item_id;
  outcome.content_hash = decision.content_hash;
  outcome.signature_valid = decision.signature_valid;
  return outcome;
}

absl::StatusOr<IngestOutcome> IngestEvaluator::DecideAndRecord(const KnownPublisher& known,
                                                               const DeliveryRecord& delivery,
                                                               absl::Time signature_time,
                                                               absl::Time now,
                                                               const std::string& replay_of) {
  const store::NewDecision next = Decide(known, delivery, signature_time, now, replay_of);
  return OutcomeOf(next.decision, ingest_.Record(next, now));
}

void IngestEvaluator::EvaluateBatched(const DeliveryRecord& delivery, Done done) {
  const absl::Time now = options_.clock();
  absl::StatusOr<KnownPublisherPtr> publisher = Publisher(delivery.publisher, now);
  if (!publisher.ok()) {
    std::move(done)(publisher.status());
    return;
  }
  if (*publisher == nullptr) {
    IngestOutcome outcome;
    outcome.verdict = IngestVerdict::kUnknownPublisher;
    outcome.reason = kReasonUnknownPublisher;
    outcome.item_id = delivery.item_id;
    outcome.content_hash = delivery.content_hash;
    std::move(done)(std::move(outcome));
    return;
  }
  if (recorder_ == nullptr) {
    std::move(done)(Evaluate(delivery));
    return;
  }
  // The signature is verified here, before the write, even for what turns out to be a duplicate:
  // the write itself (one upsert, store/ingest_store.h Record) decides between the stored
  // decision and this one exactly as Evaluate's read-then-record does: an unexpired decision
  // stays unless this one is validly signed and the stored one an unsigned drop or quarantine.
  store::NewDecision next = Decide(**publisher, delivery, now, now, "");
  DecisionRecord decision = next.decision;  // Without the bodies, which go to the writer.
  recorder_->Record(std::move(next), now,
                    [decision = std::move(decision), done = std::move(done)](
                        absl::StatusOr<store::RecordResult> recorded) mutable {
                      std::move(done)(OutcomeOf(decision, std::move(recorded)));
                    });
}

}  // namespace portcullis::verifier::ingest
