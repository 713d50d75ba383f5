#pragma once

// The source blocklist admin RPCs (AddBlock, ListBlocks, RemoveBlock): the pure half here
// (validation, page tokens, mapping); the handlers are VerifierService members defined in
// blocklist_rpc.cc.

#include <string>

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
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

void ToProto(const store::BlockEntry& entry, portcullis::verifier::v1::SourceBlock* out);
void ToProto(const store::BlockRecord& record, portcullis::verifier::v1::SourceBlock* out);

}  // namespace portcullis::verifier::server
