#include "verifier-service/src/server/ingest_rpcs.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/crypto/sha256.h"
#include "common/status/status_macros.h"
#include "verifier-service/src/server/unary_rpc.h"
#include "verifier-service/src/server/verifier_service.h"
#include "verifier-service/src/store/uuid.h"

namespace portcullis::verifier::server {
namespace {

namespace v1 = portcullis::verifier::v1;

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
constexpr char kTimeAndIdTokenPrefix[] = "d:";

absl::Status Invalid(absl::string_view field, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " ", rule));
}

bool HasNul(absl::string_view text) { return text.find('\0') != absl::string_view::npos; }

// Text stored as is: bounded, no NUL (PostgreSQL text cannot hold one).
absl::Status CheckText(absl::string_view text, size_t max_bytes, absl::string_view field) {
  if (text.size() > max_bytes) {
    return Invalid(field, absl::StrCat("is over ", max_bytes, " bytes"));
  }
  if (HasNul(text)) {
    return Invalid(field, "holds a NUL character");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePublisherName(const std::string& name, absl::string_view field) {
  if (name.empty() || name.size() > kMaxPublisherNameBytes) {
    return Invalid(field, "must be 1 to 128 bytes");
  }
  for (char c : name) {
    if (!(absl::ascii_isalnum(c) || c == '.' || c == '_' || c == ':' || c == '-')) {
      return Invalid(field, "may hold only A-Z a-z 0-9 . _ : -");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<store::DeliveryRecord> Validate(const v1::EvaluateIngestRequest& request) {
  if (absl::Status status = ValidatePublisherName(request.publisher(), "publisher");
      !status.ok()) {
    return status;
  }
  if (request.item_id().empty() || request.item_id().size() > kMaxItemIdBytes) {
    return Invalid("item_id", "must be 1 to 256 bytes");
  }
  if (HasNul(request.item_id())) {
    return Invalid("item_id", "holds a NUL character");
  }
  if (!crypto::IsSha256Hex(request.content_hash())) {
    return Invalid("content_hash", "must be 64 lowercase hexadecimal characters");
  }
  if (request.raw_body().empty()) {
    return Invalid("raw_body", "is required");
  }
  if (request.raw_body().size() > kMaxRawBodyBytes) {
    return Invalid("raw_body", "is over 1 MiB");
  }
  if (request.canonical_body().size() > kMaxCanonicalBodyBytes) {
    return Invalid("canonical_body", "is over 2 MiB");
  }
  if (!request.canonical_body().empty() &&
      crypto::ToHex(crypto::Sha256(request.canonical_body())) != request.content_hash()) {
    return Invalid("content_hash", "is not the SHA-256 of canonical_body");
  }
  const v1::ProvenanceHeaders& provenance = request.provenance();
  for (const auto& [text, field] :
       {std::pair<const std::string&, absl::string_view>{provenance.signature(),
                                                         "provenance.signature"},
        {provenance.message_id(), "provenance.message_id"},
        {provenance.timestamp(), "provenance.timestamp"}}) {
    if (absl::Status status = CheckText(text, kMaxProvenanceHeaderBytes, field); !status.ok()) {
      return status;
    }
  }
  if (absl::Status status = CheckText(request.digital_source_type(), kMaxDigitalSourceTypeBytes,
                                      "digital_source_type");
      !status.ok()) {
    return status;
  }
  if (request.media_size() > kMaxMediaElements) {
    return Invalid("media", absl::StrCat("holds more than ", kMaxMediaElements, " elements"));
  }
  for (const v1::IngestMedia& media : request.media()) {
    if (media.content_type() != "image/jpeg" && media.content_type() != "image/png") {
      return Invalid("media.content_type", "must be image/jpeg or image/png");
    }
    if (media.data().empty() || media.data().size() > kMaxMediaElementBytes) {
      return Invalid("media.data", "must be 1 byte to 2 MiB");
    }
  }
  store::DeliveryRecord delivery;
  for (const v1::IngestMedia& media : request.media()) {
    delivery.media.push_back({media.content_type(), media.data()});
  }
  delivery.publisher = request.publisher();
  delivery.item_id = request.item_id();
  delivery.content_hash = request.content_hash();
  delivery.signature_header = provenance.signature();
  delivery.message_id = provenance.message_id();
  delivery.timestamp = provenance.timestamp();
  delivery.raw_body = request.raw_body();
  delivery.canonical_body = request.canonical_body();
  if (request.has_is_synthetic()) {
    delivery.is_synthetic = request.is_synthetic();
  }
  delivery.digital_source_type = request.digital_source_type();
  return delivery;
}

absl::StatusOr<std::vector<IngestBatchItem>> ValidateIngestBatch(
    const v1::EvaluateIngestBatchRequest& request) {
  RETURN_IF_ERROR(CheckBatchSize(request.items_size()));
  std::vector<IngestBatchItem> items;
  items.reserve(request.items_size());
  for (const v1::EvaluateIngestBatchItem& item : request.items()) {
    items.push_back({AcceptRequestId(item.request_id()).value_or(""), Validate(item.item())});
  }
  return items;
}

void ToProto(const ingest::IngestOutcome& outcome, v1::EvaluateIngestResponse* response) {
  switch (outcome.verdict) {
    case ingest::IngestVerdict::kAccepted:
      response->set_decision(v1::INGEST_DECISION_ACCEPTED);
      break;
    case ingest::IngestVerdict::kDropped:
      response->set_decision(v1::INGEST_DECISION_DROPPED);
      break;
    case ingest::IngestVerdict::kDuplicate:
      response->set_decision(v1::INGEST_DECISION_DUPLICATE);
      break;
    case ingest::IngestVerdict::kQuarantined:
      response->set_decision(v1::INGEST_DECISION_QUARANTINED);
      break;
    case ingest::IngestVerdict::kUnknownPublisher:
      response->set_decision(v1::INGEST_DECISION_UNKNOWN_PUBLISHER);
      break;
  }
  response->set_reason(outcome.reason);
  response->set_item_id(outcome.item_id);
  response->set_content_hash(outcome.content_hash);
  response->set_signature_valid(outcome.signature_valid);
  response->set_dead_letter_id(outcome.dead_letter_id);
}

absl::Status ValidateDeadLetterId(const std::string& id) {
  if (!store::IsUuid(id)) {
    return Invalid("dead_letter_id", "must be a UUID");
  }
  return absl::OkStatus();
}

absl::StatusOr<int> IngestPageSize(int requested, absl::string_view field) {
  if (requested < 0 || requested > kMaxPageSize) {
    return Invalid(field, absl::StrCat("must be from 0 (default ", kDefaultPageSize, ") to ",
                                       kMaxPageSize));
  }
  return requested == 0 ? kDefaultPageSize : requested;
}

absl::StatusOr<DeadLetterPage> Validate(const v1::ListDeadLettersRequest& request) {
  DeadLetterPage page;
  if (!request.publisher().empty()) {
    if (absl::Status status = ValidatePublisherName(request.publisher(), "publisher");
        !status.ok()) {
      return status;
    }
    page.publisher = request.publisher();
  }
  absl::StatusOr<int> size = IngestPageSize(request.page_size(), "page_size");
  if (!size.ok()) {
    return size.status();
  }
  page.size = *size;
  if (!request.page_token().empty()) {
    std::optional<TimeAndIdPosition> after = ParseTimeAndIdPageToken(request.page_token());
    if (!after.has_value()) {
      return Invalid("page_token", "is not a token from a previous page");
    }
    page.after = store::DeadLetterPosition{after->at, std::move(after->id)};
  }
  return page;
}

std::string DeadLetterPageToken(const store::DeadLetterRecord& last) {
  return TimeAndIdPageToken({last.created_at, last.dead_letter_id});
}

std::string TimeAndIdPageToken(const TimeAndIdPosition& position) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(kTimeAndIdTokenPrefix, absl::ToUnixMicros(position.at), ":", position.id));
}

std::optional<TimeAndIdPosition> ParseTimeAndIdPageToken(absl::string_view token) {
  std::string decoded;
  std::vector<std::string> parts;
  int64_t micros = 0;
  if (token.size() > 256 || !absl::WebSafeBase64Unescape(token, &decoded) ||
      !absl::StartsWith(decoded, kTimeAndIdTokenPrefix) ||
      (parts = absl::StrSplit(decoded.substr(2), ':')).size() != 2 ||
      !absl::SimpleAtoi(parts[0], &micros) || !store::IsUuid(parts[1])) {
    return std::nullopt;
  }
  return TimeAndIdPosition{absl::FromUnixMicros(micros), std::move(parts[1])};
}

void ToProto(const store::DeadLetterRecord& record, v1::DeadLetter* out) {
  out->set_dead_letter_id(record.dead_letter_id);
  out->set_publisher(record.delivery.publisher);
  out->set_item_id(record.delivery.item_id);
  out->set_content_hash(record.delivery.content_hash);
  out->set_reason(record.reason);
  out->mutable_provenance()->set_signature(record.delivery.signature_header);
  out->mutable_provenance()->set_message_id(record.delivery.message_id);
  out->mutable_provenance()->set_timestamp(record.delivery.timestamp);
  out->set_raw_body(record.delivery.raw_body);
  *out->mutable_created_at() = TimestampProto(record.created_at);
}

absl::StatusOr<AcceptedItemsPage> Validate(const v1::ListAcceptedItemsRequest& request) {
  if (request.after_cursor() < 0) {
    return Invalid("after_cursor", "must not be negative");
  }
  absl::StatusOr<int> limit = IngestPageSize(request.limit(), "limit");
  if (!limit.ok()) {
    return limit.status();
  }
  return AcceptedItemsPage{request.after_cursor(), *limit};
}

void ToProto(const store::AcceptedItemRecord& record, v1::AcceptedItem* out) {
  out->set_cursor(record.cursor);
  out->set_publisher(record.publisher);
  out->set_item_id(record.item_id);
  out->set_content_hash(record.content_hash);
  out->set_canonical_body(record.canonical_body);
  out->set_signature_valid(record.signature_valid);
  *out->mutable_accepted_at() = TimestampProto(record.accepted_at);
  for (const store::MediaVerificationRecord& media : record.media) {
    v1::MediaVerification* verified = out->add_media();
    verified->set_content_type(media.content_type);
    verified->set_verdict(media.verdict);
    for (const std::string& code : media.status_codes) {
      verified->add_status_codes(code);
    }
    verified->set_signer_subject(media.signer_subject);
    verified->set_claim_generator(media.claim_generator);
    verified->set_digital_source_type(media.digital_source_type);
    verified->set_synthetic(media.synthetic);
  }
}

namespace {

// Evaluates `delivery` through the batching recorder (IngestEvaluator::EvaluateBatched): the
// publisher lookup and the signature check on `pool` (whose thread is free again once the
// decision is queued for the writer), `done` when its batch has committed; UNAVAILABLE at once
// when the pool's queue is full.
void EvaluateOnPool(BlockingPool& pool, ingest::IngestEvaluator& evaluator,
                    store::DeliveryRecord delivery, ingest::IngestEvaluator::Done done) {
  auto answer = std::make_shared<ingest::IngestEvaluator::Done>(std::move(done));
  const bool queued =
      pool.TrySubmit([&evaluator, answer, delivery = std::move(delivery)]() mutable {
        evaluator.EvaluateBatched(delivery, std::move(*answer));
      });
  if (!queued) {
    std::move(*answer)(absl::UnavailableError("verifier overloaded, retry later"));
  }
}

}  // namespace

PORTCULLIS_VERIFIER_RPC(EvaluateIngest) {
  return rpcs_.Serve(
      "EvaluateIngest", context, request, response, kIngestAccess,
      [](const v1::EvaluateIngestRequest& request) { return Validate(request); },
      OnLoop([this, response](store::DeliveryRecord delivery, Reply reply) {
        EvaluateOnPool(*deps_.pool, *deps_.evaluator, std::move(delivery),
                       [response, reply = std::move(reply)](
                           absl::StatusOr<ingest::IngestOutcome> outcome) mutable {
                         if (!outcome.ok()) {
                           const absl::Status status = StoreStatus(outcome.status(), reply.call());
                           std::move(reply)(status);
                           return;
                         }
                         ToProto(*outcome, response);
                         std::move(reply)(absl::OkStatus());
                       });
      }));
}

// Issue 21: one call for many deliveries, each evaluated as EvaluateIngest evaluates one (its
// decision written by the batching writer with whatever else is queued); the call is answered
// when every item has its answer.
PORTCULLIS_VERIFIER_RPC(EvaluateIngestBatch) {
  return rpcs_.Serve(
      "EvaluateIngestBatch", context, request, response, kIngestAccess, ValidateIngestBatch,
      OnLoop([this, response](std::vector<IngestBatchItem> items, Reply reply) {
        int valid = 0;
        for (IngestBatchItem& item : items) {
          v1::EvaluateIngestBatchResult* result = response->add_results();
          if (!item.delivery.ok()) {
            WriteItemStatus(item.delivery.status(), result->mutable_status());
          } else {
            ++valid;
          }
        }
        if (valid == 0) {
          std::move(reply)(absl::OkStatus());
          return;
        }
        auto batch = std::make_shared<BatchReply>(std::move(reply), valid);
        for (size_t i = 0; i < items.size(); ++i) {
          if (!items[i].delivery.ok()) {
            continue;
          }
          // Each answer writes only its own result (all were added above).
          v1::EvaluateIngestBatchResult* result = response->mutable_results(static_cast<int>(i));
          EvaluateOnPool(*deps_.pool, *deps_.evaluator, *std::move(items[i].delivery),
                         [batch, result, request_id = std::move(items[i].request_id)](
                             absl::StatusOr<ingest::IngestOutcome> outcome) {
                           absl::Status status = outcome.status();
                           if (outcome.ok()) {
                             ToProto(*outcome, result->mutable_decision());
                           } else {
                             status = StoreStatus(std::move(status), batch->call(), request_id);
                           }
                           WriteItemStatus(status, result->mutable_status());
                           batch->Done();
                         });
        }
      }));
}

PORTCULLIS_VERIFIER_RPC(ListDeadLetters) {
  return rpcs_.Serve(
      "ListDeadLetters", context, request, response, kUnboundAdminAccess,
      [](const v1::ListDeadLettersRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, response](DeadLetterPage page, const RpcCall&) {
               return ListPage(
                   page.size,
                   [&](int limit) {
                     return deps_.ingest->ListDeadLetters(page.publisher, page.after, limit);
                   },
                   DeadLetterPageToken,
                   [&](const store::DeadLetterRecord& letter) {
                     ToProto(letter, response->add_dead_letters());
                   },
                   response->mutable_next_page_token());
             }));
}

PORTCULLIS_VERIFIER_RPC(ReplayDeadLetter) {
  return rpcs_.Serve(
      "ReplayDeadLetter", context, request, response, kUnboundAdminAccess,
      [](const v1::ReplayDeadLetterRequest& request) {
        return ValidateDeadLetterId(request.dead_letter_id());
      },
      OnPool(*deps_.pool, [this, request, response](const RpcCall& call) -> absl::Status {
        const std::string& id = request->dead_letter_id();
        ASSIGN_OR_RETURN(ingest::IngestOutcome outcome, deps_.evaluator->Replay(id));
        ToProto(outcome, response->mutable_result());
        call.Info("dead letter replayed id={} reason={}", id, outcome.reason);
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(DiscardDeadLetter) {
  return rpcs_.Serve(
      "DiscardDeadLetter", context, request, response, kUnboundAdminAccess,
      [](const v1::DiscardDeadLetterRequest& request) {
        return ValidateDeadLetterId(request.dead_letter_id());
      },
      OnPool(*deps_.pool, [this, request](const RpcCall& call) -> absl::Status {
        RETURN_IF_ERROR(deps_.ingest->DiscardDeadLetter(request->dead_letter_id()));
        call.Info("dead letter discarded id={}", request->dead_letter_id());
        return absl::OkStatus();
      }));
}

PORTCULLIS_VERIFIER_RPC(ListAcceptedItems) {
  return rpcs_.Serve(
      "ListAcceptedItems", context, request, response, kUnboundAdminAccess,
      [](const v1::ListAcceptedItemsRequest& request) { return Validate(request); },
      OnPool(*deps_.pool,
             [this, response](AcceptedItemsPage page, const RpcCall&) -> absl::Status {
               ASSIGN_OR_RETURN(std::vector<store::AcceptedItemRecord> items,
                                deps_.ingest->ListAcceptedItems(page.after_cursor, page.limit));
               for (const store::AcceptedItemRecord& item : items) {
                 ToProto(item, response->add_items());
               }
               return absl::OkStatus();
             }));
}

}  // namespace portcullis::verifier::server
