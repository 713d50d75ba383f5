#pragma once

// Blocklist entries for mention sources (issue 9, abuse controls): what an entry may say, and how
// a submission's source is matched against entries. Pure logic; the store holds the entries and
// applies MatchKeysOf in the submission's transaction.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::verifier::intake {

enum class BlockKind {
  // The source's host is the entry's domain or one of its subdomains, on a label boundary:
  // `evil.example` blocks `evil.example` and `a.evil.example`, not `notevil.example`.
  kDomain,
  // The normalized source URL starts with the entry (plain byte prefix of the serialized form).
  kPrefix,
};

// Largest entry value, in bytes (a URL prefix; domains are at most 255).
inline constexpr size_t kMaxBlockValueBytes = 2048;

// The stored form of an entry typed by an operator. kDomain: a host as the WHATWG URL parser
// serializes it (IDNA and lowercase applied: "BÜCHER.example" → "xn--bcher-kva.example"; an IP
// literal is kept as its serialization and matches only itself); a leading "*." or "." is
// accepted and dropped. kPrefix: an absolute http(s) URL without credentials, normalized like a
// submitted source (url::Normalize), so it is compared with what submissions are compared in.
// INVALID_ARGUMENT with a message for the operator otherwise.
absl::StatusOr<std::string> NormalizeBlockValue(BlockKind kind, absl::string_view value);

// The domain entries that would block a source whose serialized host is `host`: the host itself
// and each parent domain obtained by removing whole leading labels ("a.evil.example" →
// {"a.evil.example", "evil.example", "example"}). An IP literal yields only itself.
std::vector<std::string> DomainBlockKeys(absl::string_view host);

// The serialized host of a serialized http(s) URL (the form url::Normalize writes: no
// credentials); empty when `url` has no "://".
std::string HostOfSerializedUrl(absl::string_view url);

const char* BlockKindName(BlockKind kind);  // "DOMAIN" / "PREFIX", as stored.

}  // namespace portcullis::verifier::intake
