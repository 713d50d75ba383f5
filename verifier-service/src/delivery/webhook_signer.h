#pragma once

// Signing outbound deliveries the Standard Webhooks way (issue 20): `webhook-signature` is
// `v1,<base64 HMAC-SHA256>` under a `whsec_` secret, or `v1a,<base64 Ed25519>` under a `whsk_`
// signing key, over `webhook-id "." webhook-timestamp "." body` (ingest/standard_webhooks.h has
// the primitives and the verification side).

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace portcullis::verifier::delivery {

// A subscription's signing key as stored: version "v1" with the secret bytes, or "v1a" with the
// 32-byte Ed25519 seed.
struct SigningKey {
  std::string version;
  std::string material;
};

// Reads the key given to CreateSubscription: exactly one of `secret` ("whsec_…", 24 to 64 bytes)
// and `signing_key` ("whsk_…", a 32-byte seed). INVALID_ARGUMENT otherwise; the message never
// holds the key.
absl::StatusOr<SigningKey> ParseSigningKey(absl::string_view secret, absl::string_view signing_key);

// The header value for `body` sent as `webhook_id` at `timestamp` (Unix seconds). INTERNAL for a
// stored key that is not a valid key of its version (never for keys ParseSigningKey made).
absl::StatusOr<std::string> Sign(const SigningKey& key, absl::string_view webhook_id,
                                 int64_t timestamp, absl::string_view body);

// For v1a: the public key receivers verify with ("whpk_…"); empty for v1.
std::string PublicKeyOf(const SigningKey& key);

}  // namespace portcullis::verifier::delivery
