#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/auth/api_token.h"

namespace portcullis::verifier::auth {

// Who is calling: the token a call was authenticated with. Handlers ask it for their scope and
// pass its site binding into their queries (tenant scoping lives in the SQL, not after it).
struct Caller {
  std::string token_id;
  std::string name;
  ScopeSet scopes = 0;
  SiteBinding sites;  // Empty: every site.

  // PERMISSION_DENIED naming the missing scope (never the token). `admin` includes `review`.
  absl::Status Require(Scope scope) const;
  // Whether the caller may review (the `review` or `admin` scope): else it reads only what the
  // public sees (store/public_mentions_sql.h).
  bool MayReview() const { return Require(Scope::kReview).ok(); }
  bool AllSites() const { return sites.empty(); }
  // Whether the token is bound to `domain` (or to every site).
  bool MaySee(absl::string_view domain) const;
};

}  // namespace portcullis::verifier::auth
