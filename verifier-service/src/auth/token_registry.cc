#include "verifier-service/src/auth/token_registry.h"

#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/crypto/sha256.h"
#include "common/logging/log.h"
#include "verifier-service/src/auth/stored_tokens.h"

namespace portcullis::verifier::auth {

TokenRegistry::TokenRegistry(ActiveTokenSource& source, std::vector<ActiveToken> static_tokens,
                             absl::Duration refresh_interval)
    : source_(source),
      static_tokens_(std::move(static_tokens)),
      refresh_interval_(refresh_interval) {}

TokenRegistry::TokenRegistry(store::TokenStore& tokens, std::vector<ActiveToken> static_tokens,
                             absl::Duration refresh_interval)
    : TokenRegistry(std::make_unique<StoredTokenSource>(tokens), std::move(static_tokens),
                    refresh_interval) {}

TokenRegistry::TokenRegistry(std::unique_ptr<ActiveTokenSource> owned_source,
                             std::vector<ActiveToken> static_tokens,
                             absl::Duration refresh_interval)
    : owned_source_(std::move(owned_source)),
      source_(*owned_source_),
      static_tokens_(std::move(static_tokens)),
      refresh_interval_(refresh_interval) {}

TokenRegistry::~TokenRegistry() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (refresher_ != nullptr) refresher_->join();
}

absl::Status TokenRegistry::Start() {
  absl::Status status = Refresh();
  refresher_ = std::make_unique<std::thread>([this] { RefreshLoop(); });
  return status;
}

absl::Status TokenRegistry::Refresh() {
  absl::StatusOr<std::vector<ActiveToken>> tokens = source_.ListActiveTokens();
  if (!tokens.ok()) {
    return absl::Status(tokens.status().code(),
                        absl::StrCat("cannot load API tokens: ", tokens.status().message()));
  }
  auto by_hash = std::make_shared<absl::flat_hash_map<std::string, Caller>>();
  for (const ActiveToken& token : static_tokens_) by_hash->insert_or_assign(token.token_hash, token.caller);
  for (ActiveToken& token : *tokens) by_hash->insert_or_assign(token.token_hash, std::move(token.caller));
  absl::MutexLock lock(&mu_);
  by_hash_ = std::move(by_hash);
  loaded_ = true;
  return absl::OkStatus();
}

void TokenRegistry::RefreshLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), refresh_interval_);
    if (stopping_) break;
    mu_.Unlock();
    absl::Status status = Refresh();
    if (!status.ok()) logging::Warn("{}; keeping the last snapshot", std::string(status.message()));
    mu_.Lock();
  }
}

absl::StatusOr<Caller> TokenRegistry::Authenticate(absl::string_view authorization) const {
  absl::StatusOr<std::string> token = TokenFromAuthorization(authorization);
  if (!token.ok()) return token.status();
  std::shared_ptr<const absl::flat_hash_map<std::string, Caller>> by_hash;
  {
    absl::MutexLock lock(&mu_);
    if (!loaded_) return absl::UnavailableError("API tokens not loaded yet");
    by_hash = by_hash_;
  }
  auto found = by_hash->find(HashToken(*token));
  if (found == by_hash->end()) return absl::UnauthenticatedError("unknown or revoked bearer token");
  return found->second;
}

absl::StatusOr<std::vector<ActiveToken>> ParseStaticTokens(absl::string_view text) {
  std::vector<ActiveToken> tokens;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("static tokens line ", line_number, ": ", why));
    };
    if (fields.size() < 3 || fields.size() > 4) {
      return bad("expected <sha256 hex> <name> <scopes> [sites]");
    }
    if (!crypto::IsSha256Hex(fields[0])) {
      return bad("the first field must be the lowercase hex SHA-256 of the token");
    }
    absl::StatusOr<ScopeSet> scopes = ParseScopes(fields[2]);
    if (!scopes.ok()) return bad(scopes.status().message());
    ActiveToken token;
    token.token_hash = std::string(fields[0]);
    token.caller.token_id = absl::StrCat("static:", fields[1]);
    token.caller.name = std::string(fields[1]);
    token.caller.scopes = *scopes;
    if (fields.size() == 4) {
      for (absl::string_view site : absl::StrSplit(fields[3], ',', absl::SkipEmpty())) {
        token.caller.sites.emplace_back(site);
      }
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace portcullis::verifier::auth
