#pragma once

// webmention.io's read API (issue 18): ListPublicMentions, CountPublicMentions,
// ListMentionChanges (read scope; the gateway's /api/mentions.jf2, /api/count.json,
// /api/changes) and ExportMentions, ImportMentions (admin; `portcullis export` and `import`).
// Validation (pure), the import's sanitizing, and the handlers (VerifierService members,
// public_mention_rpcs.cc).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/sha256.h"
#include "common/url/normalize.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/auth/caller.h"
#include "verifier-service/src/store/public_mention_store.h"

namespace portcullis::verifier::server {

// The rules written on ListPublicMentionsRequest, and the caller's binding (every site read must
// be within it). INVALID_ARGUMENT with a sentence safe to return, PERMISSION_DENIED.
absl::StatusOr<store::PublicMentionQuery> ValidatePublicList(
    const portcullis::verifier::v1::ListPublicMentionsRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);

// CountPublicMentions: 1 to store::kMaxPublicTargets targets, as TargetHash reads them.
absl::StatusOr<std::vector<crypto::Sha256Digest>> ValidatePublicCount(
    const portcullis::verifier::v1::CountPublicMentionsRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);

struct ChangesQuery {
  std::string domain;
  std::string after;
  int limit = 100;
};
absl::StatusOr<ChangesQuery> ValidateChanges(
    const portcullis::verifier::v1::ListMentionChangesRequest& request,
    const auth::Caller& caller);

struct ExportQuery {
  std::string domain;
  int64_t after_wm_id = 0;
  int limit = 500;
};
absl::StatusOr<ExportQuery> ValidateExport(
    const portcullis::verifier::v1::ExportMentionsRequest& request, const auth::Caller& caller);

// An import request's mentions as the store takes them: each pair checked as SubmitMention
// checks it (a rejected pair is counted in `rejected`, not an error), its content sanitized
// again (HTML by the verifier's sanitizer with the source as base, author URLs by SafeUrl, text
// capped): an export file is a stranger's input like any other.
struct ImportBatch {
  std::vector<store::ImportedMention> mentions;
  int rejected = 0;
  bool reverify = false;
};
absl::StatusOr<ImportBatch> ValidateImport(
    const portcullis::verifier::v1::ImportMentionsRequest& request,
    const url::TrackingParameters& tracking, const auth::Caller& caller);

}  // namespace portcullis::verifier::server
