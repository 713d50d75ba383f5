#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::verifier::auth {

// What a bearer token lets its holder do. Each RPC requires exactly one (see RequiredScope).
enum class Scope : uint8_t {
  kSubmit = 1 << 0,  // SubmitMention, EvaluateIngest: what the gateway does for senders.
  kRead = 1 << 1,    // GetMention, ListMentions: what a site reads.
  kAdmin = 1 << 2,   // Sites, targets, publishers, keys, dead letters, tokens, VerifyNow.
  kFetch = 1 << 3,   // CheckUrl, SafeFetch: the fetcher as a service.
  // ReviewMention, ListReviewQueue, approval rules, ListMentions by review state (issue 16). An
  // admin token may review too (Caller::Require).
  kReview = 1 << 4,
};
using ScopeSet = uint8_t;

// "submit", "read", "admin", "fetch", "review".
absl::string_view ScopeName(Scope scope);
// "submit,read" → the set; INVALID_ARGUMENT naming an unknown scope, or for an empty list.
absl::StatusOr<ScopeSet> ParseScopes(absl::string_view comma_separated);
// The set as a sorted comma-separated list ("admin,read").
std::string FormatScopes(ScopeSet scopes);
inline bool HasScope(ScopeSet scopes, Scope scope) {
  return (scopes & static_cast<ScopeSet>(scope)) != 0;
}

// A new bearer token: "pct_" and 64 lowercase hex digits (256 random bits). Shown once; only
// its hash is stored.
std::string GenerateToken();
// Lowercase hex SHA-256 of a token: what is stored and looked up, never the token itself.
std::string HashToken(absl::string_view token);
// The token of an `authorization` metadata value "Bearer pct_…" (scheme case-insensitive).
// UNAUTHENTICATED, without echoing the value, when it is missing or not such a token.
absl::StatusOr<std::string> TokenFromAuthorization(absl::string_view authorization);

// Site domains as stored: each a host in the form AddSite stores (checked by the caller),
// empty = every site.
using SiteBinding = std::vector<std::string>;

}  // namespace portcullis::verifier::auth
