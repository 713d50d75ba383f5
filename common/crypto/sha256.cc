#include "common/crypto/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "absl/strings/escaping.h"

namespace portcullis::crypto {

Sha256Digest Sha256(absl::string_view data) {
  Sha256Digest digest{};
  unsigned int length = 0;
  // EVP_Digest with SHA-256 cannot fail for in-memory input short of memory exhaustion, which
  // OpenSSL reports by returning 0; that would be a bug we want to see loudly.
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size()) {
    std::abort();
  }
  return digest;
}

std::string ToHex(const Sha256Digest& digest) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bool IsSha256Hex(absl::string_view text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == absl::string_view::npos;
}

}  // namespace portcullis::crypto
