#pragma once

// The site RPCs (AddSite, ListSites, RemoveSite) and their targets' (AddTarget, ImportTargets,
// ListTargets, RemoveTarget): validation on top of intake/site_request_validation.h (the caller's
// binding), the mapping of stored sites and targets to the proto, and the handlers
// (VerifierService members, site_rpcs.cc).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/intake/site_request_validation.h"
#include "verifier-service/src/store/site_store.h"

namespace portcullis::verifier::server {

// The site of AddSite/RemoveSite, normalized; PERMISSION_DENIED outside the caller's binding.
absl::StatusOr<std::string> ValidateSite(const portcullis::verifier::v1::AddSiteRequest& request,
                                         const auth::Caller& caller);
absl::StatusOr<std::string> ValidateSite(
    const portcullis::verifier::v1::RemoveSiteRequest& request, const auth::Caller& caller);

// The target rule(s) of AddTarget/RemoveTarget/ImportTargets; PERMISSION_DENIED unless every
// rule is on a site within the caller's binding.
absl::StatusOr<intake::TargetRule> ValidateTarget(
    const portcullis::verifier::v1::AddTargetRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);
absl::StatusOr<intake::TargetRule> ValidateTarget(
    const portcullis::verifier::v1::RemoveTargetRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);
absl::StatusOr<std::vector<intake::TargetRule>> ValidateTargets(
    const portcullis::verifier::v1::ImportTargetsRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);

// ListTargets' page; PERMISSION_DENIED when it names a site outside the caller's binding.
absl::StatusOr<intake::TargetPage> ValidateTargetPage(
    const portcullis::verifier::v1::ListTargetsRequest& request, const auth::Caller& caller);

void ToProto(const store::SiteRecord& site, portcullis::verifier::v1::Site* out);
void ToProto(const store::TargetRecord& record, portcullis::verifier::v1::Target* out);

}  // namespace portcullis::verifier::server
