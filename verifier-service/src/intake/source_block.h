#pragma once

// Blocklist entries for mention sources (issue 9, abuse controls): what an entry may say, and how
// a submission's source is matched against entries. Pure logic; the store holds the entries and
// matches a source's keys in the submission's transaction, so the kind and the keys are the
// store's plain values (store/source_block.h), re-exported here.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/store/source_block.h"

namespace portcullis::verifier::intake {

using BlockKind = store::BlockKind;
using store::BlockKindName;
using store::DomainBlockKeys;
using store::HostOfSerializedUrl;

// Largest entry value, in bytes (a URL prefix; domains are at most 255).
inline constexpr size_t kMaxBlockValueBytes = 2048;

// The stored form of an entry typed by an operator. kDomain: a host as the WHATWG URL parser
// serializes it (IDNA and lowercase applied: "BÜCHER.example" → "xn--bcher-kva.example"; an IP
// literal is kept as its serialization and matches only itself); a leading "*." or "." is
// accepted and dropped. kPrefix: an absolute http(s) URL without credentials, normalized like a
// submitted source (url::Normalize), so it is compared with what submissions are compared in.
// INVALID_ARGUMENT with a message for the operator otherwise.
absl::StatusOr<std::string> NormalizeBlockValue(BlockKind kind, absl::string_view value);

}  // namespace portcullis::verifier::intake
