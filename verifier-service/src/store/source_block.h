#pragma once

// A source blocklist entry's kind and the keys a submission's source is matched by, as the store
// applies them in the submission's transaction: plain values and pure functions on the stored
// (serialized) forms. intake/ re-exports them next to the parsing of an operator's entry
// (intake::NormalizeBlockValue).

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace portcullis::verifier::store {

enum class BlockKind {
  // The source's host is the entry's domain or one of its subdomains, on a label boundary:
  // `evil.example` blocks `evil.example` and `a.evil.example`, not `notevil.example`.
  kDomain,
  // The normalized source URL starts with the entry (plain byte prefix of the serialized form).
  kPrefix,
};

const char* BlockKindName(BlockKind kind);  // "DOMAIN" / "PREFIX", as stored.

// The domain entries that would block a source whose serialized host is `host`: the host itself
// and each parent domain obtained by removing whole leading labels ("a.evil.example" →
// {"a.evil.example", "evil.example", "example"}). An IP literal yields only itself.
std::vector<std::string> DomainBlockKeys(absl::string_view host);

// The serialized host of a serialized http(s) URL (the form url::Normalize writes: no
// credentials); empty when `url` has no "://".
std::string HostOfSerializedUrl(absl::string_view url);

}  // namespace portcullis::verifier::store
