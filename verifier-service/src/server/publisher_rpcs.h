#pragma once

// The publisher admin RPCs (AddPublisher, ListPublishers, SetPublisherEnabled, AddPublisherKey,
// RevokePublisherKey, UpdatePublisher): request validation, key parsing, the mapping of store records to
// responses, and the handlers (VerifierService members, publisher_rpcs.cc).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "portcullis/verifier/v1/verifier.pb.h"
#include "verifier-service/src/store/publisher_store.h"

namespace portcullis::verifier::server {

// The rules of AddPublisherRequest: the name (ValidatePublisherName), retention_seconds from 0
// (the server default) to ten years, keep_drops_seconds from 0 (off) to ten years, c2pa_trust as
// UpdatePublisherRequest's.
// kInvalidArgument naming the field.
absl::StatusOr<store::PublisherSettings> Validate(
    const portcullis::verifier::v1::AddPublisherRequest& request);

// UpdatePublisherRequest: the name, and at least one setting, each in AddPublisher's range;
// c2pa_trust empty or PEM certificates that all parse, at most kMaxC2paTrustBytes.
inline constexpr size_t kMaxC2paTrustBytes = 256 * 1024;
struct PublisherUpdate {
  std::string name;
  store::PublisherSettingsChange change;
};
absl::StatusOr<PublisherUpdate> Validate(
    const portcullis::verifier::v1::UpdatePublisherRequest& request);

struct PublisherPage {
  std::string after;  // Empty: from the first.
  int size = 100;
};
absl::StatusOr<PublisherPage> Validate(
    const portcullis::verifier::v1::ListPublishersRequest& request);
std::string PublisherPageToken(const std::string& last_name);

// A key as stored: algorithm and material.
struct ParsedPublisherKey {
  std::string algorithm;  // store::kEd25519Algorithm or store::kHmacSha256Algorithm.
  std::string material;   // 32-byte public key, or the 24..64-byte secret.
};

// `whpk_<strict base64 of 32 bytes>` (Ed25519 public key) or `whsec_<strict base64 of 24 to 64
// bytes>` (HMAC secret). Anything else, a `whsk_` private key included, is kInvalidArgument; the
// message never contains the key.
absl::StatusOr<ParsedPublisherKey> ParsePublisherKey(const std::string& serialized);

// The publisher name and key of AddPublisherKeyRequest.
absl::StatusOr<ParsedPublisherKey> Validate(
    const portcullis::verifier::v1::AddPublisherKeyRequest& request);

// The publisher name and key id (a UUID) of RevokePublisherKeyRequest.
absl::Status Validate(const portcullis::verifier::v1::RevokePublisherKeyRequest& request);

// Secrets never leave: an HMAC key is reported without its material, an Ed25519 key with its
// `whpk_` public key.
void ToProto(const store::PublisherKeyRecord& key, portcullis::verifier::v1::PublisherKey* out);
void ToProto(const store::PublisherRecord& publisher, bool with_keys,
             portcullis::verifier::v1::Publisher* out);

}  // namespace portcullis::verifier::server
