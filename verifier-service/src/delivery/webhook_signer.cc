#include "verifier-service/src/delivery/webhook_signer.h"

#include "absl/strings/match.h"
#include "common/crypto/ed25519.h"
#include "verifier-service/src/ingest/standard_webhooks.h"

namespace portcullis::verifier::delivery {

absl::StatusOr<SigningKey> ParseSigningKey(absl::string_view secret,
                                           absl::string_view signing_key) {
  if (secret.empty() == signing_key.empty()) {
    return absl::InvalidArgumentError(
        "give exactly one of a whsec_ secret (v1) and a whsk_ signing key (v1a)");
  }
  if (!secret.empty()) {
    if (!absl::StartsWith(secret, "whsec_")) {
      return absl::InvalidArgumentError("secret must be whsec_ followed by base64");
    }
    absl::StatusOr<ingest::VerificationKey> key = ingest::ParseVerificationKey("secret", secret);
    if (!key.ok() || key->version != ingest::SignatureVersion::kV1) {
      return absl::InvalidArgumentError(
          "secret must be whsec_ followed by the padded base64 of 24 to 64 bytes");
    }
    return SigningKey{"v1", key->material};
  }
  absl::StatusOr<crypto::Ed25519PrivateKey> key = ingest::ParseSigningKey(signing_key);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        "signing key must be whsk_ followed by the padded base64 of a 32-byte Ed25519 seed");
  }
  return SigningKey{"v1a", std::string(key->seed())};
}

absl::StatusOr<std::string> Sign(const SigningKey& key, absl::string_view webhook_id,
                                 int64_t timestamp, absl::string_view body) {
  const std::string content = ingest::SignedContent(webhook_id, timestamp, body);
  if (key.version == "v1") {
    if (key.material.empty()) {
      return absl::InternalError("stored v1 secret is empty");
    }
    return ingest::SignV1(key.material, content);
  }
  if (key.version == "v1a") {
    absl::StatusOr<crypto::Ed25519PrivateKey> private_key =
        crypto::Ed25519PrivateKey::FromSeed(key.material);
    if (!private_key.ok()) {
      return absl::InternalError("stored v1a key is not a 32-byte seed");
    }
    return ingest::SignV1a(*private_key, content);
  }
  return absl::InternalError("stored signature version is neither v1 nor v1a");
}

std::string PublicKeyOf(const SigningKey& key) {
  if (key.version != "v1a") {
    return "";
  }
  absl::StatusOr<crypto::Ed25519PrivateKey> private_key =
      crypto::Ed25519PrivateKey::FromSeed(key.material);
  if (!private_key.ok()) {
    return "";
  }
  return ingest::SerializePublicKey(private_key->PublicKey());
}

}  // namespace portcullis::verifier::delivery
