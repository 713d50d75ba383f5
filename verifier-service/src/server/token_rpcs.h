#pragma once

// The API token admin RPCs (CreateToken, ListTokens, RevokeToken): validation, the mapping, and
// the handlers (VerifierService members, token_rpcs.cc).

#include <string>

#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/store/token_store.h"

namespace portcullis::verifier::server {

inline constexpr size_t kMaxTokenNameBytes = 128;
inline constexpr int kMaxTokenSites = 100;
inline constexpr size_t kMaxTokenIdBytes = 64;

// What a new token stands for (token_id empty): a name of 1 to 128 bytes without control
// characters, at least one known scope, and at most 100 sites, each a host normalized as AddSite
// stores it (duplicates dropped). INVALID_ARGUMENT naming the field otherwise.
absl::StatusOr<auth::Caller> Validate(const portcullis::verifier::v1::CreateTokenRequest& request);

// A token id: not empty, at most 64 bytes. INVALID_ARGUMENT otherwise.
absl::Status Validate(const portcullis::verifier::v1::RevokeTokenRequest& request);

// The above, and FAILED_PRECONDITION for a static token (it lives in the tokens file).
absl::Status ValidateRevocable(const portcullis::verifier::v1::RevokeTokenRequest& request);

// Everything but the token and its hash.
void ToProto(const store::TokenRecord& record, portcullis::verifier::v1::ApiToken* out);

}  // namespace portcullis::verifier::server
