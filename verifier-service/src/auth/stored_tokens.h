#pragma once

// API tokens as the store keeps them (store/token_store.h: plain values, scopes by name) and as
// authentication knows them (Caller): the conversions, and the store as the registry's source of
// active tokens. auth/ depends on store's values here; store/ knows nothing of auth/.

#include <vector>

#include "absl/status/statusor.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/auth/token_registry.h"
#include "verifier-service/src/store/token_store.h"

namespace portcullis::verifier::auth {

// The caller a stored token stands for. Stored scopes passed the table's CHECK; an unknown one
// could only come from a newer schema, and then the token has no scope.
Caller CallerOf(const store::TokenHolder& holder);

// What the store keeps of `caller` (the store assigns the token_id).
store::TokenHolder HolderOf(const Caller& caller);

// The store's active tokens, as the registry loads them.
class StoredTokenSource final : public ActiveTokenSource {
 public:
  // `tokens` must outlive the source.
  explicit StoredTokenSource(store::TokenStore& tokens) : tokens_(tokens) {}
  absl::StatusOr<std::vector<ActiveToken>> ListActiveTokens() override;

 private:
  store::TokenStore& tokens_;
};

}  // namespace portcullis::verifier::auth
