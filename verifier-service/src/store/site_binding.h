#pragma once

#include <string>
#include <vector>

namespace portcullis::verifier::store {

// The sites a caller may see, as the stores filter by them: site domains as stored (each a host
// in the form AddSite stores), empty = every site. A plain list of domains, so that the stores
// know nothing of tokens: SiteBinding is the same type, and a caller's `sites` passes as is.
using SiteBinding = std::vector<std::string>;

}  // namespace portcullis::verifier::store
