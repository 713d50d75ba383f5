#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/intake/target_rules.h"

// Validation of the site and target admin requests: the rules written in verifier.proto,
// enforced before anything reaches the database. Every error is INVALID_ARGUMENT with one
// sentence that is safe to return to the caller.
namespace portcullis::verifier::intake {

// Default and largest page size of the List RPCs.
inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;
// Most entries in one ImportTargets call.
inline constexpr int kMaxImportTargets = 10000;

// A validated ListSites request: sites after `after_domain` (empty: the first page).
struct SitePage {
  std::string after_domain;
  int size = kDefaultPageSize;
};

// A validated ListTargets request.
struct TargetPage {
  std::string domain;  // Empty: every site.
  std::optional<TargetRule> after;
  int size = kDefaultPageSize;
};

// The served domain named by the request (ParseSiteDomain).
absl::StatusOr<std::string> Validate(const v1::AddSiteRequest& request);
absl::StatusOr<std::string> Validate(const v1::RemoveSiteRequest& request);
absl::StatusOr<SitePage> Validate(const v1::ListSitesRequest& request);

// The target rule named by the request (ParseTargetRule); the kind must be EXACT or PREFIX.
absl::StatusOr<TargetRule> Validate(const v1::AddTargetRequest& request,
                                    const url::TrackingParameters& tracking);
absl::StatusOr<TargetRule> Validate(const v1::RemoveTargetRequest& request,
                                    const url::TrackingParameters& tracking);
// Every entry, in order; the error names the 0-based index of the first bad one.
absl::StatusOr<std::vector<TargetRule>> Validate(const v1::ImportTargetsRequest& request,
                                                 const url::TrackingParameters& tracking);
absl::StatusOr<TargetPage> Validate(const v1::ListTargetsRequest& request);

// Opaque page tokens naming the last item of a page.
std::string SitePageToken(const std::string& last_domain);
std::string TargetPageToken(const TargetRule& last);

}  // namespace portcullis::verifier::intake
