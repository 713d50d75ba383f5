#pragma once

#include "verifier-service/src/store/pg_connection_pool.h"
#include "verifier-service/src/store/token_store.h"

namespace portcullis::verifier::store {

// TokenStore on PostgreSQL (table `api_tokens`).
class PgTokenStore final : public TokenStore {
 public:
  // `pool` must outlive the store.
  explicit PgTokenStore(PgConnectionPool& pool) : pool_(pool) {}

  absl::StatusOr<std::vector<ActiveTokenRow>> ListActiveTokens() override;
  absl::StatusOr<TokenRecord> CreateToken(const std::string& token_hash,
                                          const TokenHolder& holder) override;
  absl::StatusOr<std::vector<TokenRecord>> ListTokens() override;
  absl::StatusOr<TokenRecord> RevokeToken(const std::string& token_id) override;

 private:
  PgConnectionPool& pool_;
};

}  // namespace portcullis::verifier::store
