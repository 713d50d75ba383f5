#pragma once

// The source blocklist admin RPCs (AddBlock, ListBlocks, RemoveBlock): validation, page tokens,
// the mapping, and the handlers (VerifierService members, blocklist_rpcs.cc).

#include <string>

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/intake/source_block.h"
#include "verifier-service/src/store/blocklist_store.h"

namespace portcullis::verifier::server {

// A SourceBlock of AddBlock/RemoveBlock: kind set, value normalized
// (intake::NormalizeBlockValue), site (when set) normalized as a host. INVALID_ARGUMENT naming
// the field otherwise.
absl::StatusOr<store::BlockEntry> ValidateBlock(const portcullis::verifier::v1::SourceBlock& block);

struct BlockPage {
  std::string site;
  std::string after_kind;   // "DOMAIN"/"PREFIX"; empty with after_value: from the first.
  std::string after_value;
  int size = 100;
};
absl::StatusOr<BlockPage> ValidateBlockPage(
    const portcullis::verifier::v1::ListBlocksRequest& request);
std::string BlockPageToken(const store::BlockEntry& last);

// The above, and the caller's binding: a site's entries need the site within it, the global
// ones (no site) an unbound token (PERMISSION_DENIED otherwise).
absl::StatusOr<store::BlockEntry> ValidateBlock(
    const portcullis::verifier::v1::AddBlockRequest& request, const auth::Caller& caller);
absl::StatusOr<store::BlockEntry> ValidateBlock(
    const portcullis::verifier::v1::RemoveBlockRequest& request, const auth::Caller& caller);
absl::StatusOr<BlockPage> ValidateBlockPage(
    const portcullis::verifier::v1::ListBlocksRequest& request, const auth::Caller& caller);

void ToProto(const store::BlockEntry& entry, portcullis::verifier::v1::SourceBlock* out);
void ToProto(const store::BlockRecord& record, portcullis::verifier::v1::SourceBlock* out);

}  // namespace portcullis::verifier::server
