#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verifier-service/src/auth/token_registry.h"

namespace portcullis::verifier::store {

// A token as stored (never the token itself).
struct TokenRecord {
  auth::Caller caller;  // token_id, name, scopes, sites.
  absl::Time created_at;
  std::optional<absl::Time> revoked_at;
};

// API tokens (migrations/0006_create_api_tokens.sql). Thread-safe, blocking. Errors as
// MentionStore: UNAVAILABLE when the database cannot be reached.
class TokenStore : public auth::ActiveTokenSource {
 public:
  // Stores a token by its hash; `caller.token_id` is ignored (assigned here).
  virtual absl::StatusOr<TokenRecord> CreateToken(const std::string& token_hash,
                                                  const auth::Caller& caller) = 0;
  // Every token, active and revoked, oldest first.
  virtual absl::StatusOr<std::vector<TokenRecord>> ListTokens() = 0;
  // Revokes a token by id; NOT_FOUND when no token has that id (or it is not a UUID).
  virtual absl::StatusOr<TokenRecord> RevokeToken(const std::string& token_id) = 0;
};

}  // namespace portcullis::verifier::store
