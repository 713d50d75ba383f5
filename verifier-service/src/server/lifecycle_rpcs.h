#pragma once

// The data lifecycle RPCs (issue 17): Erase, and the drop ledger's ListDrops and
// ReevaluateDrops. Validation, the mapping, and the handlers (VerifierService members,
// lifecycle_rpcs.cc).

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/ingest/ingest_evaluator.h"
#include "verifier-service/src/store/erasure_store.h"
#include "verifier-service/src/store/ingest_store.h"

namespace portcullis::verifier::server {

// An EraseRequest's key, normalized: author_url an absolute http(s) URL without credentials
// (serialized as the URL parser writes it, as verification stores authors), source_host a host
// name or IP literal (serialized), mention_id a UUID. INVALID_ARGUMENT naming the field otherwise,
// or when no key is set. `dry_run` with `undo` is refused too (an undo changes only tombstones).
struct EraseCommand {
  store::ErasureKey key;
  bool dry_run = false;
  bool undo = false;
};
absl::StatusOr<EraseCommand> ValidateErase(const portcullis::verifier::v1::EraseRequest& request);

void ToProto(const store::ErasureOutcome& outcome, bool dry_run,
             portcullis::verifier::v1::EraseResponse* out);

// The drop filter of ListDrops and ReevaluateDrops: publisher a publisher name
// (ValidatePublisherName), reason empty or 1 to 64 bytes of [a-z_], since unset or a valid time
// (seconds from 0001 to 9999, nanos 0 to 999999999). INVALID_ARGUMENT naming the field.
struct DropQuery {
  store::DropFilter filter;
  std::optional<store::DropPosition> after;  // ListDrops: the page token's position.
  int size = 100;                            // ListDrops: the page size.
  bool dry_run = false;                      // ReevaluateDrops.
};
absl::StatusOr<DropQuery> ValidateListDrops(
    const portcullis::verifier::v1::ListDropsRequest& request);
absl::StatusOr<DropQuery> ValidateReevaluateDrops(
    const portcullis::verifier::v1::ReevaluateDropsRequest& request);
std::string DropPageToken(const store::DroppedDeliveryRecord& last);

void ToProto(const store::DroppedDeliveryRecord& record,
             portcullis::verifier::v1::DroppedDelivery* out);
void ToProto(const ingest::DropReevaluation& result, bool dry_run,
             portcullis::verifier::v1::ReevaluateDropsResponse* out);

}  // namespace portcullis::verifier::server
