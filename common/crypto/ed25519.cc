#include "common/crypto/ed25519.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace portcullis::crypto {
namespace {

struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct EvpMdCtxDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;
using EvpMdCtxPtr = std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter>;

const unsigned char* Bytes(absl::string_view s) {
  static constexpr unsigned char kEmpty[1] = {0};
  return s.empty() ? kEmpty : reinterpret_cast<const unsigned char*>(s.data());
}

EvpPkeyPtr PrivateKeyFromSeed(const std::array<uint8_t, kEd25519SeedSize>& seed) {
  EvpPkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
  if (key == nullptr) {
    std::abort();  // Any 32 bytes are a valid seed; only memory exhaustion gets here.
  }
  return key;
}

// One verification with an already decoded key; `signature` is 64 bytes.
bool VerifyWith(EVP_PKEY* key, absl::string_view message, absl::string_view signature) {
  const EvpMdCtxPtr context(EVP_MD_CTX_new());
  if (context == nullptr ||
      EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, key) != 1) {
    return false;
  }
  return EVP_DigestVerify(context.get(), Bytes(signature), signature.size(), Bytes(message),
                          message.size()) == 1;
}

}  // namespace

absl::StatusOr<Ed25519PublicKey> Ed25519PublicKey::FromRaw(absl::string_view raw) {
  if (raw.size() != kEd25519PublicKeySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an Ed25519 public key is ", kEd25519PublicKeySize, " bytes, not ", raw.size()));
  }
  std::array<uint8_t, kEd25519PublicKeySize> bytes;
  std::memcpy(bytes.data(), raw.data(), bytes.size());
  return Ed25519PublicKey(bytes);
}

bool Ed25519PublicKey::Verify(absl::string_view message, absl::string_view signature) const {
  if (signature.size() != kEd25519SignatureSize) {
    return false;
  }
  const EvpPkeyPtr key(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()));
  if (key == nullptr) {
    return false;  // Not a point encoding OpenSSL accepts.
  }
  return VerifyWith(key.get(), message, signature);
}

absl::StatusOr<Ed25519Verifier> Ed25519Verifier::FromRaw(absl::string_view raw) {
  if (raw.size() != kEd25519PublicKeySize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "an Ed25519 public key is ", kEd25519PublicKeySize, " bytes, not ", raw.size()));
  }
  EVP_PKEY* key = EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
  if (key == nullptr) {
    return absl::InvalidArgumentError("not an Ed25519 public key OpenSSL accepts");
  }
  return Ed25519Verifier(std::shared_ptr<evp_pkey_st>(key, EvpPkeyDeleter()));
}

bool Ed25519Verifier::Verify(absl::string_view message, absl::string_view signature) const {
  if (signature.size() != kEd25519SignatureSize) {
    return false;
  }
  return VerifyWith(key_.get(), message, signature);
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromSeed(absl::string_view seed) {
  if (seed.size() != kEd25519SeedSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("an Ed25519 seed is ", kEd25519SeedSize, " bytes, not ", seed.size()));
  }
  std::array<uint8_t, kEd25519SeedSize> bytes;
  std::memcpy(bytes.data(), seed.data(), bytes.size());
  Ed25519PrivateKey key(bytes);
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return key;
}

Ed25519PrivateKey Ed25519PrivateKey::Generate() {
  std::array<uint8_t, kEd25519SeedSize> bytes;
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    std::abort();  // No randomness: nothing safe to do.
  }
  Ed25519PrivateKey key(bytes);
  OPENSSL_cleanse(bytes.data(), bytes.size());
  return key;
}

Ed25519PrivateKey::~Ed25519PrivateKey() { OPENSSL_cleanse(seed_.data(), seed_.size()); }

std::string Ed25519PrivateKey::Sign(absl::string_view message) const {
  const EvpPkeyPtr key = PrivateKeyFromSeed(seed_);
  const EvpMdCtxPtr context(EVP_MD_CTX_new());
  std::string signature(kEd25519SignatureSize, '\0');
  size_t length = signature.size();
  if (context == nullptr ||
      EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     Bytes(message), message.size()) != 1 ||
      length != kEd25519SignatureSize) {
    std::abort();  // Signing in memory with a valid key fails only on memory exhaustion.
  }
  return signature;
}

Ed25519PublicKey Ed25519PrivateKey::PublicKey() const {
  const EvpPkeyPtr key = PrivateKeyFromSeed(seed_);
  std::array<uint8_t, kEd25519PublicKeySize> raw;
  size_t length = raw.size();
  if (EVP_PKEY_get_raw_public_key(key.get(), raw.data(), &length) != 1 || length != raw.size()) {
    std::abort();
  }
  return *Ed25519PublicKey::FromRaw(
      absl::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()));
}

}  // namespace portcullis::crypto
