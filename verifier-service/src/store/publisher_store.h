#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace portcullis::verifier::store {

// `ed25519` or `hmac-sha256`, as stored and as reported in PublisherKey.algorithm.
inline constexpr char kEd25519Algorithm[] = "ed25519";
inline constexpr char kHmacSha256Algorithm[] = "hmac-sha256";

// One key of a publisher's trust list.
struct PublisherKeyRecord {
  std::string key_id;     // A UUID.
  std::string algorithm;  // kEd25519Algorithm or kHmacSha256Algorithm.
  // The 32-byte Ed25519 public key, or the HMAC secret bytes. Never leaves the verifier.
  std::string material;
  std::string fingerprint;  // First 8 hex characters of SHA-256 of `material`.
  absl::Time created_at;
  std::optional<absl::Time> revoked_at;

  bool active() const { return !revoked_at.has_value(); }
};

// A publisher's settings (what AddPublisher takes).
struct PublisherSettings {
  std::string name;
  bool verified = false;
  bool require_signature = false;
  int64_t retention_seconds = 0;  // 0: the server default.
  // How long dropped deliveries are kept in the drop ledger (issue 17); 0: not kept.
  int64_t keep_drops_seconds = 0;
  // Issue 19: a media element without a C2PA manifest is dropped; PEM anchors of its own.
  bool require_c2pa_for_media = false;
  std::string c2pa_trust;
};

// What UpdatePublisher changes: each setting that is set.
struct PublisherSettingsChange {
  std::optional<int64_t> keep_drops_seconds;
  std::optional<bool> require_c2pa_for_media;
  std::optional<std::string> c2pa_trust;
};

struct PublisherRecord {
  PublisherSettings settings;
  bool enabled = true;
  absl::Time created_at;
  std::vector<PublisherKeyRecord> keys;  // Active and revoked, oldest first.
};

struct AddPublisherResult {
  PublisherRecord publisher;
  bool created = false;  // False when the name existed (its settings are unchanged).
};

struct AddKeyResult {
  PublisherKeyRecord key;
  bool created = false;  // False when the same key was already active.
};

// Publishers and their keys. Implementations are thread-safe and block; call them from a
// blocking pool. Errors: UNAVAILABLE / DEADLINE_EXCEEDED retryable, INTERNAL otherwise, plus
// those named per method.
class PublisherStore {
 public:
  virtual ~PublisherStore() = default;

  // The publisher with its keys; nullopt when no publisher has that name (enabled or not).
  virtual absl::StatusOr<std::optional<PublisherRecord>> GetPublisher(const std::string& name) = 0;

  // Registers a publisher; idempotent on the name.
  virtual absl::StatusOr<AddPublisherResult> AddPublisher(const PublisherSettings& settings) = 0;

  // Up to `limit` publishers named after `after` (empty: from the first), by name, with keys.
  virtual absl::StatusOr<std::vector<PublisherRecord>> ListPublishers(const std::string& after,
                                                                      int limit) = 0;

  // NOT_FOUND when no publisher has that name.
  virtual absl::StatusOr<PublisherRecord> SetEnabled(const std::string& name, bool enabled) = 0;

  // Changes the settings `change` sets, nothing else: how long the publisher's drops are kept in
  // the drop ledger (0: not kept; the rows kept so far keep their expiry), whether its media
  // must carry a C2PA manifest, its own C2PA trust anchors (PEM). NOT_FOUND when no publisher
  // has that name.
  virtual absl::StatusOr<PublisherRecord> UpdateSettings(const std::string& name,
                                                         const PublisherSettingsChange& change) = 0;

  // Adds an active key; idempotent while the same key is active. NOT_FOUND for an unknown
  // publisher.
  virtual absl::StatusOr<AddKeyResult> AddKey(const std::string& publisher,
                                              const std::string& algorithm,
                                              const std::string& material) = 0;

  // Revokes a key (a revoked key stays revoked; revoking again returns it unchanged).
  // NOT_FOUND when the publisher has no key with that id.
  virtual absl::StatusOr<PublisherKeyRecord> RevokeKey(const std::string& publisher,
                                                       const std::string& key_id) = 0;
};

}  // namespace portcullis::verifier::store
