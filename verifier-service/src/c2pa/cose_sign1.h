#pragma once

// The claim signature: a COSE_Sign1 (RFC 9052, tag 18) with a detached payload (the claim's CBOR
// bytes) and the signer's certificate chain in `x5chain` (label 33, protected or unprotected
// header), verified with OpenSSL. Algorithms: ES256/384/512 (EC P-256/384/521), PS256/384/512
// (RSASSA-PSS), EdDSA (Ed25519).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "verifier-service/src/c2pa/c2pa_limits.h"

namespace portcullis::verifier::c2pa {

// COSE algorithm identifiers (IANA "COSE Algorithms").
inline constexpr int64_t kCoseEs256 = -7;
inline constexpr int64_t kCoseEdDsa = -8;
inline constexpr int64_t kCoseEs384 = -35;
inline constexpr int64_t kCoseEs512 = -36;
inline constexpr int64_t kCosePs256 = -37;
inline constexpr int64_t kCosePs384 = -38;
inline constexpr int64_t kCosePs512 = -39;

// An RFC 3161 time-stamp of the signature (header sigTst: version 1, sigTst2: version 2).
struct CoseTimestamp {
  int version = 2;
  std::string der;  // a TimeStampResp, or a bare TimeStampToken
};

struct CoseSign1 {
  int64_t algorithm = 0;
  std::vector<std::string> x5chain;  // DER certificates, the signer's first
  std::string protected_header;      // the serialized protected header, as signed
  std::string signature;
  std::vector<CoseTimestamp> timestamps;
};

// Parses a COSE_Sign1 (tagged or not). kInvalidArgument when it is not one, has no algorithm,
// no certificate, an attached payload, or more certificates than `limits` allow.
absl::StatusOr<CoseSign1> ParseCoseSign1(absl::string_view bytes, const C2paLimits& limits);

// The bytes signed: Sig_structure ["Signature1", protected, h'', payload] in CBOR.
std::string CoseSigStructure(absl::string_view protected_header, absl::string_view payload);

// The bytes a C2PA time-stamp's message imprint covers: ["CounterSignature", protected, h'',
// payload] in CBOR, the payload being the claim (version 1) or the signature as a CBOR byte
// string (version 2).
std::string CoseTimestampedBytes(const CoseSign1& sign1, int version, absl::string_view claim);

enum class SignatureCheck {
  kValid,
  kMismatch,              // the signature does not verify under the signer's key
  kUnsupportedAlgorithm,  // not one of the algorithms above, or not the key's
  kBadCertificate,        // the signer's certificate cannot be read
};

// Verifies `sign1` over the detached `payload` with the public key of x5chain[0]. ECDSA
// signatures are COSE's fixed-width r||s; a DER ECDSA-Sig-Value is accepted too (some signers,
// c2pa-ts among them, write that).
SignatureCheck VerifyCoseSign1(const CoseSign1& sign1, absl::string_view payload);

}  // namespace portcullis::verifier::c2pa
