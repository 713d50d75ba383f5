#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verifier-service/src/store/site_binding.h"

namespace portcullis::verifier::store {

// Whom a token stands for, as stored: plain values. auth/ gives the scopes their meaning
// (auth::CallerOf / auth::HolderOf convert to and from auth::Caller).
struct TokenHolder {
  std::string token_id;  // UUID, assigned by CreateToken.
  std::string name;
  // Scope names ("read", "submit"; the table's CHECK lists them), in the order stored.
  std::vector<std::string> scopes;
  SiteBinding sites;  // Empty: every site.
};

// A token as stored (never the token itself).
struct TokenRecord {
  TokenHolder caller;  // Whom it stands for.
  absl::Time created_at;
  std::optional<absl::Time> revoked_at;
};

// One active (unrevoked) token: its hash and whom it stands for.
struct ActiveTokenRow {
  std::string token_hash;  // Lowercase hex SHA-256 of the token.
  TokenHolder caller;
};

// API tokens (migrations/0006_create_api_tokens.sql). Thread-safe, blocking. Errors as
// MentionStore: UNAVAILABLE when the database cannot be reached.
class TokenStore {
 public:
  virtual ~TokenStore() = default;
  // Every token not revoked (what the token registry loads).
  virtual absl::StatusOr<std::vector<ActiveTokenRow>> ListActiveTokens() = 0;
  // Stores a token by its hash; `holder.token_id` is ignored (assigned here).
  virtual absl::StatusOr<TokenRecord> CreateToken(const std::string& token_hash,
                                                  const TokenHolder& holder) = 0;
  // Every token, active and revoked, oldest first.
  virtual absl::StatusOr<std::vector<TokenRecord>> ListTokens() = 0;
  // Revokes a token by id; NOT_FOUND when no token has that id (or it is not a UUID).
  virtual absl::StatusOr<TokenRecord> RevokeToken(const std::string& token_id) = 0;
};

}  // namespace portcullis::verifier::store
