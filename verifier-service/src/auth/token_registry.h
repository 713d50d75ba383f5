#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/store/token_store.h"

namespace portcullis::verifier::auth {

// One active token as the registry knows it: its hash and whom it stands for.
struct ActiveToken {
  std::string token_hash;  // HashToken(token).
  Caller caller;
};

// Where active tokens come from (the database; tests use a list).
class ActiveTokenSource {
 public:
  virtual ~ActiveTokenSource() = default;
  virtual absl::StatusOr<std::vector<ActiveToken>> ListActiveTokens() = 0;
};

// The tokens every call is checked against, held in memory so that authenticating never blocks
// or touches the database: a snapshot of the source, refreshed every `refresh_interval` by a
// background thread (so a token created or revoked on any pod takes effect everywhere within one
// interval), merged with static tokens (from a file, for deployments that keep tokens in
// Secrets). A failed refresh keeps the last snapshot: a database outage does not lock everyone
// out. Until the first snapshot is loaded, Authenticate answers UNAVAILABLE.
class TokenRegistry {
 public:
  TokenRegistry(ActiveTokenSource& source, std::vector<ActiveToken> static_tokens,
                absl::Duration refresh_interval);
  // Over the token table: the store's active tokens (StoredTokenSource). `tokens` must outlive
  // the registry.
  TokenRegistry(store::TokenStore& tokens, std::vector<ActiveToken> static_tokens,
                absl::Duration refresh_interval);
  ~TokenRegistry();  // Stops the refresher.
  TokenRegistry(const TokenRegistry&) = delete;
  TokenRegistry& operator=(const TokenRegistry&) = delete;

  // Starts the background refresher (after one synchronous attempt, whose status it returns;
  // the refresher keeps trying either way).
  absl::Status Start();
  // Loads a snapshot now (also used by Start and the refresher).
  absl::Status Refresh();

  // The caller of an `authorization` metadata value. UNAUTHENTICATED for a missing, malformed,
  // unknown or revoked token (the message never contains the token); UNAVAILABLE before the
  // first snapshot.
  absl::StatusOr<Caller> Authenticate(absl::string_view authorization) const;

 private:
  TokenRegistry(std::unique_ptr<ActiveTokenSource> owned_source,
                std::vector<ActiveToken> static_tokens, absl::Duration refresh_interval);
  void RefreshLoop();

  const std::unique_ptr<ActiveTokenSource> owned_source_;  // Set when built over a TokenStore.
  ActiveTokenSource& source_;
  const std::vector<ActiveToken> static_tokens_;
  const absl::Duration refresh_interval_;

  mutable absl::Mutex mu_;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const absl::flat_hash_map<std::string, Caller>> by_hash_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<std::thread> refresher_;
};

// Parses a static tokens file: one token per line, `#` comments and blank lines ignored:
//   <sha256 hex of the token> <name> <scopes> [<site>,<site>…]
// INVALID_ARGUMENT naming the line for anything else.
absl::StatusOr<std::vector<ActiveToken>> ParseStaticTokens(absl::string_view text);

}  // namespace portcullis::verifier::auth
