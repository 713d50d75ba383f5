#pragma once

// Who may make a verifier call (issue 9): the checks every handler runs before its own
// validation, in the order the API promises — not ready → UNAVAILABLE, bearer token →
// UNAUTHENTICATED, scope (and "no site-bound token") → PERMISSION_DENIED — all in memory, so a
// refused call never waits for a thread or the database.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/server_context.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/auth/token_registry.h"

namespace portcullis::verifier::server {

// What a call needs from its token.
struct Access {
  auth::Scope scope;
  // Calls that span every site (publishers, keys, dead letters, the outbox, EvaluateIngest,
  // tokens) need a token bound to no site: a site-bound one gets PERMISSION_DENIED.
  bool unbound_only = false;
};

// The table of the API (auth-contract): which scope each RPC needs.
inline constexpr Access kSubmitAccess{auth::Scope::kSubmit, false};   // SubmitMention
inline constexpr Access kIngestAccess{auth::Scope::kSubmit, true};    // EvaluateIngest
inline constexpr Access kReadAccess{auth::Scope::kRead, false};       // GetMention, ListMentions
inline constexpr Access kFetchAccess{auth::Scope::kFetch, false};     // CheckUrl, SafeFetch
inline constexpr Access kAdminAccess{auth::Scope::kAdmin, false};     // sites, targets, blocks, VerifyNow
inline constexpr Access kReviewAccess{auth::Scope::kReview, false};    // moderation (issue 16)
inline constexpr Access kUnboundAdminAccess{auth::Scope::kAdmin, true};  // publishers, keys, dead
                                                                         // letters, outbox, tokens

// The metadata key of the bearer token (gRPC lowercases keys).
inline constexpr char kAuthorizationMetadata[] = "authorization";

// The caller of a call whose `authorization` metadata is checked against `tokens`. UNAVAILABLE
// when `ready` is false (or the tokens are not loaded yet); UNAUTHENTICATED for a missing,
// malformed, unknown or revoked token (the message never contains it); PERMISSION_DENIED for a
// token without `access.scope`, or a site-bound token when `access.unbound_only`.
absl::StatusOr<auth::Caller> AuthorizeCall(const grpc::CallbackServerContext& context,
                                           const auth::TokenRegistry& tokens, bool ready,
                                           Access access);

// PERMISSION_DENIED unless `caller` may see the site `domain` (as stored: normalized). Names the
// site (the caller's own request), never the sites the token is bound to.
absl::Status RequireSite(const auth::Caller& caller, absl::string_view domain);

// PERMISSION_DENIED for a site-bound caller: what only an unbound token may do (`what` completes
// "a site-bound token cannot …").
absl::Status RequireUnbound(const auth::Caller& caller, absl::string_view what);

}  // namespace portcullis::verifier::server
