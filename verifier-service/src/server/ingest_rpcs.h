#pragma once

// The ingest RPCs (EvaluateIngest, the dead-letter queue, ListAcceptedItems): request
// validation, the mapping of evaluator and store results to responses, and the handlers
// (VerifierService members, ingest_rpcs.cc), whose store work runs on the blocking pool.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/ingest/ingest_evaluator.h"
#include "verifier-service/src/store/ingest_store.h"

namespace portcullis::verifier::server {

inline constexpr size_t kMaxPublisherNameBytes = 128;
inline constexpr size_t kMaxItemIdBytes = 256;
inline constexpr size_t kMaxRawBodyBytes = 1 << 20;
// JCS may spell a body a little longer than it came (number exponents), never twice as long.
inline constexpr size_t kMaxCanonicalBodyBytes = 2 << 20;
inline constexpr size_t kMaxProvenanceHeaderBytes = 8192;
inline constexpr size_t kMaxDigitalSourceTypeBytes = 1024;
// EvaluateIngestRequest.media (issue 19): elements, and bytes of one.
inline constexpr int kMaxMediaElements = 16;
inline constexpr size_t kMaxMediaElementBytes = 2 << 20;

// A publisher name: 1 to 128 bytes of [A-Za-z0-9._:-]. kInvalidArgument naming `field`.
absl::Status ValidatePublisherName(const std::string& name, absl::string_view field);

// The rules written on EvaluateIngestRequest (kInvalidArgument naming the field), and the
// delivery they describe. When canonical_body is given, content_hash must be its SHA-256.
absl::StatusOr<store::DeliveryRecord> Validate(
    const portcullis::verifier::v1::EvaluateIngestRequest& request);

// One item of an EvaluateIngestBatch call, validated: its request id (empty when none usable)
// and EvaluateIngest's validation of it (an error is the item's answer, not the call's).
struct IngestBatchItem {
  std::string request_id;
  absl::StatusOr<store::DeliveryRecord> delivery;
};

// EvaluateIngestBatch (issue 21): INVALID_ARGUMENT unless it holds 1 to kMaxBatchItems items;
// each item as Validate(EvaluateIngestRequest).
absl::StatusOr<std::vector<IngestBatchItem>> ValidateIngestBatch(
    const portcullis::verifier::v1::EvaluateIngestBatchRequest& request);

void ToProto(const ingest::IngestOutcome& outcome,
             portcullis::verifier::v1::EvaluateIngestResponse* response);

// A dead-letter id: a UUID. kInvalidArgument otherwise.
absl::Status ValidateDeadLetterId(const std::string& id);

struct DeadLetterPage {
  std::string publisher;  // Empty: every publisher.
  std::optional<store::DeadLetterPosition> after;
  int size = 100;
};
absl::StatusOr<DeadLetterPage> Validate(
    const portcullis::verifier::v1::ListDeadLettersRequest& request);
std::string DeadLetterPageToken(const store::DeadLetterRecord& last);
void ToProto(const store::DeadLetterRecord& record, portcullis::verifier::v1::DeadLetter* out);

struct AcceptedItemsPage {
  int64_t after_cursor = 0;
  int limit = 100;
};
absl::StatusOr<AcceptedItemsPage> Validate(
    const portcullis::verifier::v1::ListAcceptedItemsRequest& request);
void ToProto(const store::AcceptedItemRecord& record,
             portcullis::verifier::v1::AcceptedItem* out);

// 1 to 1000; 0 means 100. kInvalidArgument naming `field` otherwise.
absl::StatusOr<int> IngestPageSize(int requested, absl::string_view field);

// The keyset position of a page ordered by time, then id (a UUID): dead letters by creation,
// the drop ledger by receipt.
struct TimeAndIdPosition {
  absl::Time at;
  std::string id;
};
// The opaque page token naming `position`.
std::string TimeAndIdPageToken(const TimeAndIdPosition& position);
// The position `token` names; nullopt when it is not a token TimeAndIdPageToken wrote.
std::optional<TimeAndIdPosition> ParseTimeAndIdPageToken(absl::string_view token);

}  // namespace portcullis::verifier::server
