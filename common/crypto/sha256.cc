#include "common/crypto/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/escaping.h"

namespace portcullis::crypto {

namespace {

// OpenSSL 3 looks the algorithm up by name on every EVP_Digest(EVP_sha256()) (a lock and a
// property query) and allocates a context each time: both once here, a context per thread.
const EVP_MD* FetchedSha256() {
  static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  return md;
}

struct ContextDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

}  // namespace

Sha256Digest Sha256(absl::string_view data) {
  thread_local const std::unique_ptr<EVP_MD_CTX, ContextDeleter> ctx(EVP_MD_CTX_new());
  Sha256Digest digest{};
  unsigned int length = 0;
  // SHA-256 of in-memory input cannot fail short of memory exhaustion (or a missing default
  // provider), which OpenSSL reports by returning 0; that would be a bug we want to see loudly.
  const EVP_MD* md = FetchedSha256();
  if (md == nullptr || ctx == nullptr || EVP_DigestInit_ex2(ctx.get(), md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest.data(), &length) != 1 || length != digest.size()) {
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
