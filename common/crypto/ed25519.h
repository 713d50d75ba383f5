#pragma once

// Ed25519 (RFC 8032) through OpenSSL, on raw keys: 32-byte public keys, 32-byte private seeds,
// 64-byte signatures. Keys are plain values; OpenSSL objects live only inside each call.

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY.

namespace portcullis::crypto {

inline constexpr size_t kEd25519PublicKeySize = 32;
inline constexpr size_t kEd25519SeedSize = 32;
inline constexpr size_t kEd25519SignatureSize = 64;

class Ed25519PublicKey {
 public:
  // kInvalidArgument unless `raw` is exactly 32 bytes.
  static absl::StatusOr<Ed25519PublicKey> FromRaw(absl::string_view raw);

  // True when `signature` is a valid Ed25519 signature of `message` under this key. Anything else
  // — wrong length, non-canonical encoding, another key's signature — is false.
  bool Verify(absl::string_view message, absl::string_view signature) const;

  absl::string_view raw() const {
    return absl::string_view(reinterpret_cast<const char*>(raw_.data()), raw_.size());
  }

  friend bool operator==(const Ed25519PublicKey& a, const Ed25519PublicKey& b) {
    return a.raw_ == b.raw_;
  }

 private:
  explicit Ed25519PublicKey(const std::array<uint8_t, kEd25519PublicKeySize>& raw) : raw_(raw) {}
  std::array<uint8_t, kEd25519PublicKeySize> raw_;
};

// A public key decoded once for many verifications: Ed25519PublicKey::Verify decodes the point
// into an OpenSSL key object on every call (≈ 10–20% of a verification); this keeps that object.
// Copies share it. Thread-safe: Verify only reads it.
class Ed25519Verifier {
 public:
  // kInvalidArgument unless `raw` is 32 bytes that OpenSSL accepts as a public key.
  static absl::StatusOr<Ed25519Verifier> FromRaw(absl::string_view raw);

  // As Ed25519PublicKey::Verify.
  bool Verify(absl::string_view message, absl::string_view signature) const;

 private:
  explicit Ed25519Verifier(std::shared_ptr<evp_pkey_st> key) : key_(std::move(key)) {}
  std::shared_ptr<evp_pkey_st> key_;
};

// A signing key, held as its RFC 8032 32-byte seed. Wiped from memory when destroyed. Used by
// publishers' tooling (`portcullis sign`) and tests; the verifier never holds one.
class Ed25519PrivateKey {
 public:
  // kInvalidArgument unless `seed` is exactly 32 bytes.
  static absl::StatusOr<Ed25519PrivateKey> FromSeed(absl::string_view seed);
  // A fresh key from OpenSSL's CSPRNG.
  static Ed25519PrivateKey Generate();

  Ed25519PrivateKey(const Ed25519PrivateKey& other) = default;
  Ed25519PrivateKey& operator=(const Ed25519PrivateKey& other) = default;
  ~Ed25519PrivateKey();

  // The 64-byte signature of `message`.
  std::string Sign(absl::string_view message) const;
  Ed25519PublicKey PublicKey() const;
  absl::string_view seed() const {
    return absl::string_view(reinterpret_cast<const char*>(seed_.data()), seed_.size());
  }

 private:
  explicit Ed25519PrivateKey(const std::array<uint8_t, kEd25519SeedSize>& seed) : seed_(seed) {}
  std::array<uint8_t, kEd25519SeedSize> seed_;
};

}  // namespace portcullis::crypto
