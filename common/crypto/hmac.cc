#include "common/crypto/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdlib>

namespace portcullis::crypto {

HmacSha256Digest HmacSha256(absl::string_view key, absl::string_view data) {
  HmacSha256Digest digest{};
  unsigned int length = 0;
  // OpenSSL wants a non-null key pointer even for an empty key.
  static constexpr unsigned char kEmpty[1] = {0};
  const void* key_bytes = key.empty() ? kEmpty : static_cast<const void*>(key.data());
  const unsigned char* data_bytes =
      data.empty() ? kEmpty : reinterpret_cast<const unsigned char*>(data.data());
  // One-shot HMAC over in-memory input fails only on memory exhaustion: a bug we want to see
  // loudly, as in Sha256.
  if (HMAC(EVP_sha256(), key_bytes, static_cast<int>(key.size()), data_bytes, data.size(),
           digest.data(), &length) == nullptr ||
      length != digest.size()) {
    std::abort();
  }
  return digest;
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace portcullis::crypto
