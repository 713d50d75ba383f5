#pragma once

// Standard Webhooks 1.0 signatures (https://www.standardwebhooks.com) as used for ingest
// provenance: a publisher signs `msg_id "." timestamp "." raw_body` and sends the signatures in
// one header as space-separated `v1,<base64 HMAC-SHA256>` and/or `v1a,<base64 Ed25519>` tokens.
// Any one token that verifies under any of the publisher's active keys suffices (key rotation);
// tokens of unknown versions are ignored.
//
// Pure logic: the caller picks the header values (webhook-* or X-Provenance-*), the keys from the
// publisher's trust list and the current time.
//
// Failures are statuses whose SignatureFailure (SignatureFailureOf) is the reason the ingest
// decision records:
//   kNoSignature           no signature header (an unsigned delivery)          kUnauthenticated
//   kHeaderTooLarge        the header is over SignatureLimits::max_header_bytes kInvalidArgument
//   kMissingId             no message id                                       kInvalidArgument
//   kMalformedId           id over max_id_bytes or with control characters     kInvalidArgument
//   kMissingTimestamp      no timestamp                                        kInvalidArgument
//   kMalformedTimestamp    not 1-19 ASCII digits                               kInvalidArgument
//   kTimestampTooOld       more than `tolerance` before now                    kUnauthenticated
//   kTimestampTooNew       more than `tolerance` after now                     kUnauthenticated
//   kMalformedSignature    no token verified, and some token of a known version
//                          was malformed (no comma, bad base64, wrong length)  kInvalidArgument
//   kNoMatchingSignature   no token verified under any key                     kUnauthenticated
//   kNoKeys                the publisher has no usable key                     kFailedPrecondition
// IsMalformedSignatureMetadata() tells the malformed ones apart: a verified publisher's delivery
// that fails with one of them is quarantined rather than dropped.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/crypto/ed25519.h"

namespace portcullis::verifier::ingest {

enum class SignatureVersion {
  kV1,   // HMAC-SHA256 with a shared secret ("whsec_...").
  kV1a,  // Ed25519 with the publisher's public key ("whpk_...").
};

// "v1" / "v1a".
absl::string_view SignatureVersionName(SignatureVersion version);

enum class SignatureFailure {
  kNoSignature,
  kHeaderTooLarge,
  kMissingId,
  kMalformedId,
  kMissingTimestamp,
  kMalformedTimestamp,
  kTimestampTooOld,
  kTimestampTooNew,
  kMalformedSignature,
  kNoMatchingSignature,
  kNoKeys,
};

// Stable snake_case names ("no_signature", "timestamp_too_old", ...) for decision reasons.
absl::string_view SignatureFailureName(SignatureFailure failure);

// True for the failures that mean "signature metadata present but malformed": kHeaderTooLarge,
// kMissingId, kMalformedId, kMissingTimestamp, kMalformedTimestamp, kMalformedSignature.
bool IsMalformedSignatureMetadata(SignatureFailure failure);

// The reason carried by a status from this file; nullopt for OK or any other status.
std::optional<SignatureFailure> SignatureFailureOf(const absl::Status& status);

// Smallest and largest HMAC secret, in bytes (the specification asks for 24 to 64).
inline constexpr size_t kMinHmacSecretBytes = 24;
inline constexpr size_t kMaxHmacSecretBytes = 64;

// One key of a publisher's trust list.
struct VerificationKey {
  std::string id;  // The caller's name for the key (reported back when it verifies).
  SignatureVersion version = SignatureVersion::kV1;
  std::string material;  // kV1: the secret bytes; kV1a: the 32-byte public key.
  // kV1a, optional: `material` already decoded (PrepareVerificationKey), so that verifying does
  // not decode it again for every delivery. Must be the same key as `material`.
  std::optional<crypto::Ed25519Verifier> ed25519;
};

// Decodes a kV1a key's material once (sets `ed25519`); a no-op for kV1 and for material OpenSSL
// refuses (such a key then never verifies, as before).
void PrepareVerificationKey(VerificationKey& key);

// Reads a serialized key: "whsec_<base64>" (or bare base64, as the reference libraries accept) is
// a v1 HMAC secret of 24..64 bytes; "whpk_<base64>" a v1a Ed25519 public key of 32 bytes. Base64
// is strict (padded, canonical): unpadded secrets are refused. A "whsk_" signing key is refused
// (a private key does not belong in a trust list). Errors are kInvalidArgument; the message never
// contains the key.
absl::StatusOr<VerificationKey> ParseVerificationKey(absl::string_view id,
                                                     absl::string_view serialized);

// Reads "whsk_<base64 32-byte seed>", the Ed25519 signing key a publisher keeps.
absl::StatusOr<crypto::Ed25519PrivateKey> ParseSigningKey(absl::string_view serialized);

// "whpk_<base64>" / "whsk_<base64>" for an Ed25519 key pair.
std::string SerializePublicKey(const crypto::Ed25519PublicKey& key);
std::string SerializeSigningKey(const crypto::Ed25519PrivateKey& key);

struct SignatureLimits {
  // Longer headers are refused outright (kHeaderTooLarge). Eight v1a tokens take 751 bytes.
  size_t max_header_bytes = 2048;
  // Only the first `max_tokens` tokens are examined; later ones are ignored.
  size_t max_tokens = 8;
  size_t max_id_bytes = 256;
  // Accepted distance between the timestamp and now, both ways (inclusive).
  absl::Duration tolerance = absl::Seconds(300);
};

// One token of a signature header.
struct SignatureToken {
  enum class Kind {
    kV1,       // A well-formed v1 token; `signature` holds the 32 MAC bytes.
    kV1a,      // A well-formed v1a token; `signature` holds the 64 signature bytes.
    kUnknown,  // Another version: ignored.
    kMalformed,
  };
  Kind kind = Kind::kMalformed;
  std::string signature;
  std::string problem;  // For kMalformed: what is wrong, for logs (never the token itself).
};

// Splits a signature header into its first `limits.max_tokens` tokens (separated by runs of
// spaces or tabs) and reads each one. Never fails: bad tokens come back as kMalformed.
std::vector<SignatureToken> ParseSignatureHeader(absl::string_view header,
                                                 const SignatureLimits& limits = {});

// The signature-bearing parts of a delivery, as received. Empty means absent.
struct SignedDelivery {
  absl::string_view msg_id;
  absl::string_view timestamp;
  absl::string_view signature_header;
  absl::string_view body;  // The raw bytes, exactly as received.
};

struct VerifiedSignature {
  std::string key_id;
  SignatureVersion version = SignatureVersion::kV1;
};

// Verifies `delivery` against `keys` at time `now`. Checks, in order: a signature header is
// present and not too large, id and timestamp are present and well formed, the timestamp is
// within `limits.tolerance` of `now`, then each examined token against each key of its version
// (HMAC compared in constant time), keys in the order given. The first token that verifies wins.
absl::StatusOr<VerifiedSignature> VerifyDelivery(const SignedDelivery& delivery,
                                                 absl::Span<const VerificationKey> keys,
                                                 absl::Time now,
                                                 const SignatureLimits& limits = {});

// `msg_id "." timestamp "." body`: the bytes that are signed.
std::string SignedContent(absl::string_view msg_id, int64_t timestamp, absl::string_view body);

// A "v1,<base64>" token for `content` under HMAC secret bytes `secret`.
std::string SignV1(absl::string_view secret, absl::string_view content);
// A "v1a,<base64>" token for `content` under `key`.
std::string SignV1a(const crypto::Ed25519PrivateKey& key, absl::string_view content);

}  // namespace portcullis::verifier::ingest
