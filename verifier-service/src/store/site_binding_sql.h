#pragma once

// Tenant scoping in the stores' SQL: a caller's site binding (SiteBinding, empty = every
// site) travels as one text[] parameter, and every statement that reads or changes a site's data
// filters by it, e.g. `WHERE ($3::text[] = '{}' OR s.domain = ANY ($3::text[]))`. So no data of
// a site outside the binding leaves the database, whatever the caller does with the result.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/store/site_binding.h"

// The filter as SQL text: `column` (a site domain) is in the binding parameter `param` ("$3").
#define PORTCULLIS_SITE_VISIBLE(column, param) \
  "(" param "::text[] = '{}' OR " column " = ANY (" param "::text[]))"

namespace portcullis::verifier::store {

// The binding as a text[] literal parameter ("{}" for every site; each domain quoted).
std::string SiteBindingParameter(const SiteBinding& visible_sites);

// Whether `domain` is inside the binding (every domain is when it is empty). The stores ask it
// before a statement keyed by a domain the caller named, so that a domain outside the binding is
// refused whether or not it is served (nothing about other tenants' sites leaks), and the SQL
// filters by the binding as well.
bool SiteVisible(const SiteBinding& visible_sites, absl::string_view domain);

// PERMISSION_DENIED for a request about `domain`, outside the caller's binding.
absl::Status SiteNotVisible(absl::string_view domain);

// PERMISSION_DENIED for a request about global (site-less) data by a site-bound caller.
absl::Status GlobalNotVisible();

}  // namespace portcullis::verifier::store
