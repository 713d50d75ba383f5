#pragma once

// The C2PA validation status codes Portcullis reports (C2PA 2.1, section 15 "Validation"),
// spelled exactly as the specification does: they are what an operator greps for and what a
// sender reads in a drop reason (`c2pa_<code>`).

#include "absl/strings/string_view.h"

namespace portcullis::verifier::c2pa::codes {

// Success codes.
inline constexpr absl::string_view kClaimSignatureValidated = "claimSignature.validated";
inline constexpr absl::string_view kSigningCredentialTrusted = "signingCredential.trusted";
inline constexpr absl::string_view kAssertionHashedUriMatch = "assertion.hashedURI.match";
inline constexpr absl::string_view kAssertionDataHashMatch = "assertion.dataHash.match";
inline constexpr absl::string_view kTimeStampTrusted = "timeStamp.trusted";

// Informational: recorded with success false, never a failure code (the chain is then checked at
// the current time instead).
inline constexpr absl::string_view kTimeStampUntrusted = "timeStamp.untrusted";

// Failure codes.
inline constexpr absl::string_view kClaimMissing = "claim.missing";
inline constexpr absl::string_view kClaimMultiple = "claim.multiple";
inline constexpr absl::string_view kClaimCborInvalid = "claim.cbor.invalid";
inline constexpr absl::string_view kClaimHardBindingsMissing = "claim.hardBindings.missing";
inline constexpr absl::string_view kClaimSignatureMissing = "claimSignature.missing";
inline constexpr absl::string_view kClaimSignatureMismatch = "claimSignature.mismatch";
inline constexpr absl::string_view kSigningCredentialUntrusted = "signingCredential.untrusted";
inline constexpr absl::string_view kSigningCredentialInvalid = "signingCredential.invalid";
inline constexpr absl::string_view kSigningCredentialExpired = "signingCredential.expired";
inline constexpr absl::string_view kAssertionHashedUriMismatch = "assertion.hashedURI.mismatch";
inline constexpr absl::string_view kAssertionMissing = "assertion.missing";
inline constexpr absl::string_view kAssertionMultipleHardBindings =
    "assertion.multipleHardBindings";
inline constexpr absl::string_view kAssertionCborInvalid = "assertion.cbor.invalid";
inline constexpr absl::string_view kAssertionActionMalformed = "assertion.action.malformed";
inline constexpr absl::string_view kAssertionDataHashMalformed = "assertion.dataHash.malformed";
inline constexpr absl::string_view kAssertionDataHashMismatch = "assertion.dataHash.mismatch";
inline constexpr absl::string_view kAlgorithmUnsupported = "algorithm.unsupported";
inline constexpr absl::string_view kManifestInaccessible = "manifest.inaccessible";
// The asset container or the JUMBF structure around the manifests cannot be read at all.
inline constexpr absl::string_view kGeneralError = "general.error";

}  // namespace portcullis::verifier::c2pa::codes
