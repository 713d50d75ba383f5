#pragma once

// The data lifecycle RPCs (issue 17): Erase. Validation, the mapping, and the handlers
// (VerifierService members, lifecycle_rpcs.cc).

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/store/erasure_store.h"

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

}  // namespace portcullis::verifier::server
