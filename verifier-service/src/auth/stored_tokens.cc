#include "verifier-service/src/auth/stored_tokens.h"

#include <type_traits>
#include <utility>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace portcullis::verifier::auth {

// A caller's binding passes to the stores as it is.
static_assert(std::is_same_v<SiteBinding, store::SiteBinding>);

Caller CallerOf(const store::TokenHolder& holder) {
  Caller caller;
  caller.token_id = holder.token_id;
  caller.name = holder.name;
  caller.scopes = ParseScopes(absl::StrJoin(holder.scopes, ",")).value_or(0);
  caller.sites = holder.sites;
  return caller;
}

store::TokenHolder HolderOf(const Caller& caller) {
  store::TokenHolder holder;
  holder.token_id = caller.token_id;
  holder.name = caller.name;
  holder.scopes = absl::StrSplit(FormatScopes(caller.scopes), ',', absl::SkipEmpty());
  holder.sites = caller.sites;
  return holder;
}

absl::StatusOr<std::vector<ActiveToken>> StoredTokenSource::ListActiveTokens() {
  absl::StatusOr<std::vector<store::ActiveTokenRow>> rows = tokens_.ListActiveTokens();
  if (!rows.ok()) return rows.status();
  std::vector<ActiveToken> tokens;
  tokens.reserve(rows->size());
  for (store::ActiveTokenRow& row : *rows) {
    tokens.push_back({std::move(row.token_hash), CallerOf(row.caller)});
  }
  return tokens;
}

}  // namespace portcullis::verifier::auth
