#include "verifier-service/src/store/site_binding_sql.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "verifier-service/src/store/pg_connection_pool.h"

namespace portcullis::verifier::store {

std::string SiteBindingParameter(const SiteBinding& visible_sites) {
  return TextArrayLiteral(visible_sites);
}

bool SiteVisible(const SiteBinding& visible_sites, absl::string_view domain) {
  return visible_sites.empty() ||
         std::find(visible_sites.begin(), visible_sites.end(), domain) != visible_sites.end();
}

absl::Status SiteNotVisible(absl::string_view domain) {
  return absl::PermissionDeniedError(absl::StrCat("the token is not bound to site ", domain));
}

absl::Status GlobalNotVisible() {
  return absl::PermissionDeniedError("global entries need a token that is not bound to sites");
}

}  // namespace portcullis::verifier::store
