#pragma once

// Validates the active C2PA manifest of a JPEG or PNG file (C2PA 2.1, "Validation"), as far as
// Portcullis relies on it:
//   1. the manifest store is found (JPEG APP11 / PNG caBX) and parsed as JUMBF; the active
//      manifest is the last one;
//   2. its claim (c2pa.claim or c2pa.claim.v2, CBOR) is read;
//   3. the claim signature (COSE_Sign1 over the claim bytes) verifies under the certificate in
//      its x5chain, and that chain leads to a trust anchor, checked at the time of an RFC 3161
//      time-stamp of the signature (sigTst / sigTst2) when one verifies against the anchors
//      (timeStamp.trusted), otherwise at `now`;
//   4. every assertion the claim references is present and its hashed URI matches;
//   5. the hard binding c2pa.hash.data, recomputed over the file minus its exclusions, matches.
// The result lists C2PA status codes in that order, plus what the manifest declares: the signer's
// subject, the claim generator and the digitalSourceType of its c2pa.actions.
//
// Pure logic over bytes; never crashes on any input; every size a file controls is capped.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "verifier-service/src/c2pa/asset_container.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"
#include "verifier-service/src/c2pa/trust_anchors.h"

namespace portcullis::verifier::c2pa {

struct ValidationStatus {
  std::string code;         // a C2PA validation status code (status_codes.h)
  std::string url;          // the JUMBF URI the code is about, when there is one
  std::string explanation;  // a short human sentence, never file content beyond a label
  bool success = false;
};

enum class Verdict {
  kNoManifest,  // the file carries no C2PA manifest store
  kMalformed,   // a manifest store is there but cannot be parsed (container, JUMBF, claim CBOR)
  kInvalid,     // parsed, and some check failed: see failure_code
  kValid,       // every check passed, the signer chains to a trust anchor
};

// "no_manifest", "malformed", "invalid", "valid".
absl::string_view VerdictName(Verdict verdict);

struct ValidationResult {
  MediaType media_type = MediaType::kJpeg;
  Verdict verdict = Verdict::kNoManifest;
  std::vector<ValidationStatus> statuses;
  // The first failure code, in check order; empty for kValid and kNoManifest.
  std::string failure_code;
  std::string manifest_label;
  std::string signer_subject;
  std::string claim_generator;
  // The digitalSourceType the active manifest's c2pa.actions declare (an AI one when any
  // action declares one, otherwise the first declared); empty when none does.
  std::string digital_source_type;
};

// The IPTC digital source type of media a generative model made.
inline constexpr char kTrainedAlgorithmicMedia[] =
    "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia";

// True for the IPTC digital source types of generative AI: trainedAlgorithmicMedia and
// compositeWithTrainedAlgorithmicMedia, as a full IPTC URI or the bare term.
bool IsAiDigitalSourceType(absl::string_view digital_source_type);

// Validates `asset` (bytes of a `type` file). Trust is decided by `anchors` at `now`.
ValidationResult ValidateAsset(absl::string_view asset, MediaType type, const TrustAnchors& anchors,
                               absl::Time now, const C2paLimits& limits);

}  // namespace portcullis::verifier::c2pa
