#include "verifier-service/src/auth/caller.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace portcullis::verifier::auth {

absl::Status Caller::Require(Scope scope) const {
  if (HasScope(scopes, scope)) return absl::OkStatus();
  // An admin, who sets a site's policy, may also review under it.
  if (scope == Scope::kReview && HasScope(scopes, Scope::kAdmin)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("the token lacks the \"", ScopeName(scope), "\" scope"));
}

bool Caller::MaySee(absl::string_view domain) const {
  return AllSites() || std::find(sites.begin(), sites.end(), domain) != sites.end();
}

}  // namespace portcullis::verifier::auth
