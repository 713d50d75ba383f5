#pragma once

// What the C2PA manifests of an item's media say about the item (issue 19 "Decisions"), as a pure
// function the ingest evaluator can apply after its signature rules and before its synthetic
// rule. Per media element, in order, first match wins:
//   a manifest that cannot be parsed      verified publisher: quarantine  malformed_c2pa_manifest
//                                          otherwise: drop                 c2pa_<failure code>
//   a manifest that fails validation      drop                            c2pa_<failure code>
//     (signature, trust, expiry, hashed URIs, data hash: the first failing status code)
//   no manifest, require_c2pa_for_media   drop                            missing_c2pa_manifest
// Otherwise no ruling, and two facts for the synthetic rule:
//   synthetic            some element's valid manifest declares an AI digitalSourceType
//                        (trainedAlgorithmicMedia, compositeWithTrainedAlgorithmicMedia);
//   provenance_valid     there is media, and every element carries a valid manifest whose signer
//                        chains to a trust anchor — a synthetic item with it is kept.
// A manifest that fails is a drop whatever it declares: nothing trusted vouches for it.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"
#include "verifier-service/src/c2pa/manifest_validator.h"
#include "verifier-service/src/c2pa/trust_anchors.h"

namespace portcullis::verifier::c2pa {

inline constexpr char kReasonMissingManifest[] = "missing_c2pa_manifest";
inline constexpr char kReasonMalformedManifest[] = "malformed_c2pa_manifest";
// Drop reasons are this prefix + the C2PA status code, e.g. "c2pa_claimSignature.mismatch".
inline constexpr char kReasonPrefix[] = "c2pa_";

// One media element of an item: its declared type and its decoded bytes.
struct MediaElement {
  MediaType type = MediaType::kJpeg;
  std::string data;
};

struct MediaRuling {
  enum class Action { kNone, kDrop, kQuarantine };
  Action action = Action::kNone;
  std::string reason;  // kDrop / kQuarantine only
  bool synthetic = false;
  bool provenance_valid = false;
  // Per element, in order: what was verified (kept with an accepted item).
  std::vector<ValidationResult> results;
};

struct MediaRulingOptions {
  bool publisher_verified = false;
  bool require_c2pa_for_media = false;
};

MediaRuling RuleOnMedia(const std::vector<MediaElement>& media, const TrustAnchors& anchors,
                        absl::Time now, const MediaRulingOptions& options,
                        const C2paLimits& limits);

}  // namespace portcullis::verifier::c2pa
