#include "verifier-service/src/auth/api_token.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/crypto/random.h"
#include "common/crypto/sha256.h"

namespace portcullis::verifier::auth {
namespace {

constexpr absl::string_view kTokenPrefix = "pct_";
constexpr size_t kTokenHexDigits = 64;

struct NamedScope {
  Scope scope;
  absl::string_view name;
};
// Sorted by name, so FormatScopes lists them sorted.
constexpr std::array<NamedScope, 5> kScopes = {{
    {Scope::kAdmin, "admin"},
    {Scope::kFetch, "fetch"},
    {Scope::kRead, "read"},
    {Scope::kReview, "review"},
    {Scope::kSubmit, "submit"},
}};

bool IsLowerHex(absl::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

absl::string_view ScopeName(Scope scope) {
  for (const NamedScope& named : kScopes) {
    if (named.scope == scope) return named.name;
  }
  return "unknown";
}

absl::StatusOr<ScopeSet> ParseScopes(absl::string_view comma_separated) {
  ScopeSet scopes = 0;
  for (absl::string_view part : absl::StrSplit(comma_separated, ',', absl::SkipWhitespace())) {
    part = absl::StripAsciiWhitespace(part);
    bool known = false;
    for (const NamedScope& named : kScopes) {
      if (part == named.name) {
        scopes |= static_cast<ScopeSet>(named.scope);
        known = true;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown scope \"", part.substr(0, 32), "\" (submit, read, admin, fetch, review)"));
    }
  }
  if (scopes == 0) return absl::InvalidArgumentError("at least one scope is required");
  return scopes;
}

std::string FormatScopes(ScopeSet scopes) {
  std::vector<absl::string_view> names;
  for (const NamedScope& named : kScopes) {
    if (HasScope(scopes, named.scope)) names.push_back(named.name);
  }
  return absl::StrJoin(names, ",");
}

std::string GenerateToken() {
  return absl::StrCat(kTokenPrefix, crypto::RandomHex(kTokenHexDigits / 2));
}

std::string HashToken(absl::string_view token) { return crypto::ToHex(crypto::Sha256(token)); }

absl::StatusOr<std::string> TokenFromAuthorization(absl::string_view authorization) {
  constexpr absl::string_view kScheme = "bearer ";
  if (authorization.empty()) {
    return absl::UnauthenticatedError("missing bearer token (authorization metadata)");
  }
  if (authorization.size() < kScheme.size() ||
      !absl::EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError("authorization is not a bearer token");
  }
  absl::string_view token = absl::StripAsciiWhitespace(authorization.substr(kScheme.size()));
  if (token.size() != kTokenPrefix.size() + kTokenHexDigits ||
      !absl::StartsWith(token, kTokenPrefix) || !IsLowerHex(token.substr(kTokenPrefix.size()))) {
    return absl::UnauthenticatedError("malformed bearer token");
  }
  return std::string(token);
}

}  // namespace portcullis::verifier::auth
